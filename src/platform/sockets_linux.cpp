// The Linux path of platform/sockets.hpp: MSG_NOSIGNAL on every send, SO_REUSEPORT balancing.
#include "platform/sockets.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

namespace tern::detail::platform {

void ignore_sigpipe() noexcept {}

native_socket open_stream_socket(int family, bool non_blocking) noexcept {
    return ::socket(family, SOCK_STREAM | SOCK_CLOEXEC | (non_blocking ? SOCK_NONBLOCK : 0), 0);
}

bool balances_shared_port() noexcept { return true; }

void share_port(native_socket fd) noexcept {
    const int on = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &on, sizeof on);
}

}  // namespace tern::detail::platform

// The portable path of platform/sockets.hpp: SIGPIPE ignored once for the process (no
// MSG_NOSIGNAL on macOS, none on Windows), one socket per port.
#include "platform/sockets.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>

namespace tern::detail::platform {

void ignore_sigpipe() noexcept {
    // A function-local static is initialized once, by the first caller, under the language's
    // own guard.
    [[maybe_unused]] static const bool ignored = std::signal(SIGPIPE, SIG_IGN) != SIG_ERR;
}

native_socket open_stream_socket(int family, bool non_blocking) noexcept {
    const int fd = ::socket(family, SOCK_STREAM, 0);
    if (fd < 0) return -1;
    if (::fcntl(fd, F_SETFD, FD_CLOEXEC) != 0 ||
        (non_blocking && ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK) != 0)) {
        const int err = errno;
        ::close(fd);
        errno = err;
        return -1;
    }
    return fd;
}

bool balances_shared_port() noexcept { return false; }

void share_port(native_socket /*fd*/) noexcept {}

}  // namespace tern::detail::platform

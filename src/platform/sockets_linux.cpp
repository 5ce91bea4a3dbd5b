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

bool open_wake_channel(native_socket& read_end, native_socket& write_end) noexcept {
    int fds[2];
    if (::pipe(fds) != 0) return false;
    for (const int fd : fds) {
        if (::fcntl(fd, F_SETFD, FD_CLOEXEC) != 0 ||
            ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK) != 0) {
            const int err = errno;
            ::close(fds[0]);
            ::close(fds[1]);
            errno = err;
            return false;
        }
    }
    read_end = fds[0];
    write_end = fds[1];
    return true;
}

native_socket duplicate_descriptor(int fd) noexcept { return ::fcntl(fd, F_DUPFD_CLOEXEC, 0); }

bool keep_passed_socket(int fd) noexcept {
    const int flags = ::fcntl(fd, F_GETFD);
    return flags >= 0 && ::fcntl(fd, F_SETFD, flags | FD_CLOEXEC) == 0;
}

}  // namespace tern::detail::platform

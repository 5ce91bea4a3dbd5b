// The POSIX calls of platform/sockets.hpp that Linux's path and the portable path share
// (sockets_linux.cpp and sockets_portable.cpp): the wake channel (a pipe), and descriptors
// duplicated or passed in, close-on-exec. Compiled on every POSIX system, never on Windows
// (sockets_windows.cpp).
#include "platform/sockets.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

namespace tern::detail::platform {

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

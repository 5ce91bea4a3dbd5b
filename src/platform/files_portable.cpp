// The portable path of platform/files.hpp: POSIX calls only (mkstemp, openat with
// O_NOFOLLOW), and no kernel copy of file pieces.
#include "platform/files.hpp"

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <cerrno>

namespace tern::detail::platform {

namespace {

// Without O_PATH a directory is opened for reading: a directory on the way that may be
// searched but not read is refused (EACCES), where Linux's path walks through it.
constexpr int directory_flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;

}  // namespace

int open_spool_file(const std::string& dir) {
    std::string name = dir + "/tern-body-XXXXXX";
    const int fd = ::mkstemp(name.data());
    if (fd < 0) return -1;
    // Unlinked before anyone could use the name: the file lives as long as the descriptor.
    ::unlink(name.c_str());
    if (::fcntl(fd, F_SETFD, FD_CLOEXEC) != 0) {
        const int err = errno;
        ::close(fd);
        errno = err;
        return -1;
    }
    return fd;
}

ssize_t send_file_piece(native_socket /*socket*/, int /*file*/, std::uint64_t /*offset*/,
                        std::size_t /*n*/) noexcept {
    errno = ENOSYS;
    return -1;
}

int open_directory(const char* path) noexcept { return ::open(path, directory_flags); }

int open_directory_at(int at, const char* name) noexcept {
    return ::openat(at, name, directory_flags);
}

}  // namespace tern::detail::platform

// The POSIX calls of platform/files.hpp that Linux's path and the portable path share
// (files_linux.cpp and files_portable.cpp call the system the same way here): the real path
// of a root, and the walk's lstat, openat with O_NOFOLLOW, readlinkat and fstatat. Compiled
// on every POSIX system, never on Windows (files_windows.cpp).
#include "platform/files.hpp"

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdlib>

namespace tern::detail::platform {

std::string real_path(const char* path) {
    char* real = ::realpath(path, nullptr);
    if (real == nullptr) return {};
    std::string resolved(real);
    std::free(real);
    return resolved;
}

int stat_no_follow(const char* path, struct stat& st) noexcept { return ::lstat(path, &st); }

int open_file_at(int at, const char* name) noexcept {
    // O_NONBLOCK: a FIFO planted in the root must not block the event loop on open.
    return ::openat(at, name, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY);
}

ssize_t read_link_at(int at, const char* name, char* out, std::size_t size) noexcept {
    return ::readlinkat(at, name, out, size);
}

int stat_at_no_follow(int at, const char* name, struct stat& st) noexcept {
    return ::fstatat(at, name, &st, AT_SYMLINK_NOFOLLOW);
}

}  // namespace tern::detail::platform

// The Linux path of platform/files.hpp: O_TMPFILE, sendfile(2), O_PATH.
#include "platform/files.hpp"

#include <fcntl.h>
#include <sys/sendfile.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>

namespace tern::detail::platform {

namespace {

// Only searched, never read (O_PATH needs no read permission), never through a symlink.
constexpr int directory_flags = O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;

}  // namespace

int open_spool_file(const std::string& dir) {
    const int fd = ::open(dir.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (fd >= 0) return fd;
    // No O_TMPFILE (an old kernel, or a file system without it): a named file, unlinked
    // before anyone could use the name.
    std::string name = dir + "/tern-body-XXXXXX";
    const int named = ::mkostemp(name.data(), O_CLOEXEC);
    if (named < 0) return -1;
    ::unlink(name.c_str());
    return named;
}

ssize_t send_file_piece(native_socket socket, int file, std::uint64_t offset,
                        std::size_t n) noexcept {
    auto at = static_cast<off_t>(offset);
    return ::sendfile(socket, file, &at, n);
}

int open_directory(const char* path) noexcept { return ::open(path, directory_flags); }

int open_directory_at(int at, const char* name) noexcept {
    return ::openat(at, name, directory_flags);
}

}  // namespace tern::detail::platform

#pragma once
// The file calls that differ between the I/O paths (TERN_IO, docs/platforms.md): spool files,
// a file piece sent to a socket, directories opened on the way to a static file. Linux:
// O_TMPFILE, sendfile(2), O_PATH (files_linux.cpp). Portable: a named temporary file
// unlinked at once, no kernel copy (the caller reads the piece and sends it), directories
// opened for reading (files_portable.cpp). The lowest layer: no other folder of src/.

#include "platform/file_status.hpp"
#include "platform/socket_api.hpp"

#include <sys/types.h>

#include <sys/stat.h>

#if !defined(_WIN32)
#include <fcntl.h>
#include <limits.h>
#include <sys/mman.h>
#include <unistd.h>
#endif

#include <cstddef>
#include <cstdint>
#include <string>

namespace tern::detail::platform {

/// A new file in the directory `dir` that has no name (removed when its descriptor closes),
/// opened read-write and close-on-exec. Linux: O_TMPFILE, or where the file system lacks it a
/// named file unlinked at once. Portable: mkstemp, unlinked at once. -1 with errno when it
/// cannot be made.
int open_spool_file(const std::string& dir);

/// The longest name of one directory entry (NAME_MAX; 255 on Windows).
#if defined(_WIN32)
inline constexpr std::size_t max_name_length = 255;
#else
inline constexpr std::size_t max_name_length = NAME_MAX;
#endif

/// fstat(2) of `fd`: 0, or -1 with errno. Windows: the C runtime's, with a directory (a
/// handle the static-files walk opened) said to be one, which the runtime does not tell, and
/// the handle's last write time in 100 ns steps (file_status.hpp).
#if defined(_WIN32)
int stat_descriptor(int fd, file_status& st) noexcept;
#else
inline int stat_descriptor(int fd, file_status& st) noexcept { return ::fstat(fd, &st); }
#endif

/// `path` made absolute with every symlink resolved (realpath(3); on Windows the full path,
/// _wfullpath): empty with errno when it cannot be.
std::string real_path(const char* path);

/// stat of `path` itself, a symlink not followed (lstat(2); stat on Windows): 0, or -1 with
/// errno.
int stat_no_follow(const char* path, struct stat& st) noexcept;

/// The file `name` in the directory `at`, opened for reading, never through a symlink, never
/// blocking on a FIFO (openat(2), O_NOFOLLOW | O_NONBLOCK): -1 with errno. Windows: ENOSYS
/// (open_directory gives no directory to open it in).
int open_file_at(int at, const char* name) noexcept;

/// The target of the symlink `name` in `at` (readlinkat(2)) into `out`: its length, or -1
/// with errno (EINVAL: not a symlink). Windows: -1, EINVAL.
ssize_t read_link_at(int at, const char* name, char* out, std::size_t size) noexcept;

/// stat of `name` in `at`, a symlink not followed (fstatat(2), AT_SYMLINK_NOFOLLOW): 0, or
/// -1 with errno. Windows: -1, ENOSYS.
int stat_at_no_follow(int at, const char* name, struct stat& st) noexcept;

/// `path` opened for reading, close-on-exec (not inherited on Windows): -1 with errno.
#if defined(_WIN32)
int open_read_only(const char* path) noexcept;
#else
inline int open_read_only(const char* path) noexcept { return ::open(path, O_RDONLY | O_CLOEXEC); }
#endif

/// Reads up to `n` bytes of `file` at `offset` into `out` without moving a shared offset
/// (pread(2); ReadFile with the offset on Windows): the bytes read (0 at the end), or -1 with
/// errno. Inline on POSIX: the file bodies' read path is the plain call.
#if defined(_WIN32)
ssize_t read_file_at(int file, void* out, std::size_t n, std::uint64_t offset) noexcept;
#else
inline ssize_t read_file_at(int file, void* out, std::size_t n, std::uint64_t offset) noexcept {
    return ::pread(file, out, n, static_cast<off_t>(offset));
}
#endif

/// write(2) of up to `n` bytes to `file`: the bytes written, or -1 with errno (EINTR: try
/// again). Windows (the CRT's _write) writes at most INT_MAX bytes a call.
#if defined(_WIN32)
ssize_t write_file(int file, const void* data, std::size_t n) noexcept;
#else
inline ssize_t write_file(int file, const void* data, std::size_t n) noexcept {
    return ::write(file, data, n);
}
#endif

/// The first `size` bytes (more than 0) of `file` mapped read-only and private (mmap(2);
/// a file mapping on Windows): null when they cannot be. Undone by unmap_file.
#if defined(_WIN32)
const void* map_file(int file, std::size_t size) noexcept;
void unmap_file(const void* view, std::size_t size) noexcept;
#else
inline const void* map_file(int file, std::size_t size) noexcept {
    void* view = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, file, 0);
    return view == MAP_FAILED ? nullptr : view;
}
inline void unmap_file(const void* view, std::size_t size) noexcept {
    ::munmap(const_cast<void*>(view), size);
}
#endif

/// Sends up to `n` bytes of `file` from `offset` to the non-blocking `socket` in the kernel:
/// the bytes sent, or -1 with errno (EAGAIN: the socket is full). Linux: sendfile(2).
/// Portable: always -1 with ENOSYS; the caller reads the piece and sends it itself.
ssize_t send_file_piece(native_socket socket, int file, std::uint64_t offset,
                        std::size_t n) noexcept;

/// Opens the directory `path` for the walk beneath it, never through a symlink (its last
/// component), close-on-exec: -1 with errno (ELOOP or ENOTDIR on a symlink). Linux: O_PATH
/// (no read permission needed, only search). Portable: O_RDONLY.
int open_directory(const char* path) noexcept;

/// The same for `name`, one component, in the directory `at` (openat(2), O_NOFOLLOW).
int open_directory_at(int at, const char* name) noexcept;

}  // namespace tern::detail::platform

#pragma once
// The file calls that differ between the I/O paths (TERN_IO, docs/platforms.md): spool files,
// a file piece sent to a socket, directories opened on the way to a static file. Linux:
// O_TMPFILE, sendfile(2), O_PATH (files_linux.cpp). Portable: a named temporary file
// unlinked at once, no kernel copy (the caller reads the piece and sends it), directories
// opened for reading (files_portable.cpp). The lowest layer: no other folder of src/.

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <string>

namespace tern::detail::platform {

/// A new file in the directory `dir` that has no name (removed when its descriptor closes),
/// opened read-write and close-on-exec. Linux: O_TMPFILE, or where the file system lacks it a
/// named file unlinked at once. Portable: mkstemp, unlinked at once. -1 with errno when it
/// cannot be made.
int open_spool_file(const std::string& dir);

/// Sends up to `n` bytes of `file` from `offset` to the non-blocking `socket` in the kernel:
/// the bytes sent, or -1 with errno (EAGAIN: the socket is full). Linux: sendfile(2).
/// Portable: always -1 with ENOSYS; the caller reads the piece and sends it itself.
ssize_t send_file_piece(int socket, int file, std::uint64_t offset, std::size_t n) noexcept;

/// Opens the directory `path` for the walk beneath it, never through a symlink (its last
/// component), close-on-exec: -1 with errno (ELOOP or ENOTDIR on a symlink). Linux: O_PATH
/// (no read permission needed, only search). Portable: O_RDONLY.
int open_directory(const char* path) noexcept;

/// The same for `name`, one component, in the directory `at` (openat(2), O_NOFOLLOW).
int open_directory_at(int at, const char* name) noexcept;

}  // namespace tern::detail::platform

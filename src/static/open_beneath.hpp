#pragma once
// Opening a file below a root directory so that nothing outside the root can be reached:
// each component is opened with openat(O_NOFOLLOW) from the directory before it, and
// symlinks are resolved here, by hand, never by the kernel, so that a link leading out of
// the root is refused rather than followed.

#include "http/file_handle.hpp"
#include "static/root_cache.hpp"

#include "platform/file_status.hpp"

#include <string>
#include <string_view>

namespace tern::detail {

/// What `open_beneath` found.
enum class open_status {
    ok,         ///< `opened` describes the file or directory
    not_found,  ///< absent, not a directory where one was needed, a dotfile, or a symlink
                ///< that is refused (leaves the root, loops, or symlinks are not followed)
    forbidden,  ///< the OS refused access (EACCES, EPERM)
    failed,     ///< any other error (EMFILE, EIO, ...)
};

/// Rules for the walk.
struct beneath_options {
    bool follow_symlinks = true;  ///< follow links whose target stays inside the root
    bool allow_dotfiles = false;  ///< components starting with '.' (also in link targets)
};

/// A file or directory opened below the root.
struct opened_file {
    /// The file, opened O_RDONLY|O_NONBLOCK. For a directory: a descriptor good only for
    /// fstat and openat (O_PATH on Linux, platform/files.hpp), or none.
    file_handle file;
    /// The directory holding it, for siblings (-1 for the root itself): `dir_handle`'s
    /// descriptor, or the root's, which the root_cache keeps open and which stays valid
    /// until the next open_beneath call with that cache.
    int dir = -1;
    file_handle dir_handle;      ///< owns `dir` when it is below the root
    std::string name;            ///< its name in `dir` after symlinks were resolved
    platform::file_status st{};  ///< fstat of `file` (or of the directory)
};

/// Opens `relative` ('/'-separated, no leading slash, "" for the root) below `root`, an
/// absolute path without symlinks (a realpath), whose directory `roots` keeps open between
/// calls (static/root_cache.hpp). Never throws except std::bad_alloc.
open_status open_beneath(root_cache& roots, const std::string& root, std::string_view relative,
                         const beneath_options& options, opened_file& opened);

/// Opens `opened.name + suffix` in `opened.dir` (a precompressed sibling) into `file` and
/// `st` when it is a regular file and not a symlink; false when it is missing, a symlink,
/// anything but a regular file, or cannot be opened. `file` and `st` are left alone then.
bool open_sibling(const opened_file& opened, std::string_view suffix, file_handle& file,
                  platform::file_status& st);

}  // namespace tern::detail

#pragma once
// Static files, transport-free: from a GET/HEAD request's raw path and headers to the file
// to send (open, with offset and length) and the header fields to send with it, or to a
// 304, a 301, or an error status. The connection streams the file; see
// docs/static-files.md for every rule.

#include "static/mime_types.hpp"
#include "static/static_result.hpp"

#include <tern/config.hpp>
#include <tern/header_field.hpp>

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace tern::detail {

/// The configured static directories, tried in order. Immutable after construction and
/// safe to share between threads.
class static_files {
public:
    /// Validates the configs and resolves each directory once with realpath. Throws
    /// std::invalid_argument when a directory is empty, missing or not a directory, a
    /// hosted_path does not begin with '/' or is not in normal form (dot or empty segments,
    /// a control character, backslash, space, '?', '#'), index_file is not a plain name (or
    /// is a dotfile while dotfiles are denied), cache_control holds a control character, or
    /// an extra MIME type is invalid.
    explicit static_files(const std::vector<static_files_config>& configs);

    /// Whether no directory is configured.
    bool empty() const noexcept { return dirs_.empty(); }

    /// Serves GET or HEAD `method` (anything else is not_handled) for the raw, undecoded
    /// request `path`, with the request's `headers`. HEAD gets the same result as GET.
    /// Never throws: I/O failures are a 500 error, allocation failure too.
    static_result serve(std::string_view method, std::string_view path,
                        std::span<const header_field> headers) const noexcept;

private:
    struct directory {
        std::string prefix;  ///< hosted_path without its trailing '/': "" for "/"
        std::string root;    ///< realpath of the directory
        std::string index_file;
        std::string cache_control;
        bool allow_dotfiles = false;
        bool follow_symlinks = true;
        bool precompressed = true;
        mime_types types;
    };

    static static_result serve_in(const directory& dir, std::string_view rest,
                                  std::span<const header_field> headers);

    std::vector<directory> dirs_;
};

}  // namespace tern::detail

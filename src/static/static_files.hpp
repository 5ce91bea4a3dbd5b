#pragma once
// Static files, transport-free: from a GET/HEAD request to the response that sends a file
// (open, with offset and length) with its header fields, or to a 304, a 301, or an error
// status. The connection streams the file; see docs/static-files.md for every rule.

#include "http/request.hpp"
#include "http/response.hpp"
#include "static/file_response.hpp"
#include "static/mime_types.hpp"
#include "static/root_cache.hpp"
#include "static/static_outcome.hpp"

#include <tern/config.hpp>

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
    /// is a dotfile while dotfiles are denied), spa_fallback is not a normalized relative
    /// path (or names a dotfile while dotfiles are denied), cache_control holds a control
    /// character, or an extra MIME type is invalid.
    explicit static_files(const std::vector<static_files_config>& configs);

    /// Whether no directory is configured.
    bool empty() const noexcept { return dirs_.empty(); }

    /// Answers a GET or HEAD `req` (any other method is not_handled) into `res`, from its
    /// raw, undecoded path, its query (kept on a redirect's Location) and its header
    /// fields. HEAD gets the same answer as GET. Sets the status, the content type of a
    /// file, and appends header fields to those `res` has (Content-Type aside, in order:
    /// Last-Modified, ETag, Accept-Ranges, Content-Encoding, Vary, Cache-Control,
    /// Content-Range, Location, as they apply). A path no directory has a file for goes to
    /// the first claiming directory's spa_fallback when the request accepts HTML and the
    /// last segment has no '.' (the answer then also carries `Vary: Accept`). I/O failures are a
    /// 500; out of memory ends the process (docs/architecture.md, "Failures"). `roots` keeps the
    /// directories open: one per event loop.
    static_outcome serve(const request& req, response& res, root_cache& roots) const noexcept;

private:
    struct directory {
        std::string prefix;  ///< hosted_path without its trailing '/': "" for "/"
        std::string root;    ///< realpath of the directory
        std::string index_file;
        std::string spa_fallback;  ///< decoded relative path; empty: no fallback
        std::string cache_control;
        bool allow_dotfiles = false;
        bool follow_symlinks = true;
        bool precompressed = true;
        bool cache_small_files = true;
        unsigned cache_rules = 0;  ///< the options above that a file_cache key holds
        mime_types types;
    };

    static static_outcome serve_in(const directory& dir, std::string_view rest, const request& req,
                                   response& res, root_cache& roots);
    static static_outcome serve_fallback(const directory& dir, std::string_view rest,
                                         const request& req, response& res, root_cache& roots);
    /// The loop's held copy of `relative` in `dir` when it has a current one (and the
    /// directory holds small files), else null.
    static const cached_file* held(const directory& dir, std::string_view relative,
                                   root_cache& roots);
    /// The regular file `relative` (held by the loop, or opened below the root).
    static static_outcome serve_file(const directory& dir, std::string_view relative,
                                     const request& req, response& res, root_cache& roots);
    /// Answers for `opened`, the regular file at `relative`, keeping it in the loop's cache
    /// when it is small enough.
    static static_outcome answer_opened(const directory& dir, std::string_view relative,
                                        opened_file opened, const request& req, response& res,
                                        root_cache& roots);
    /// The answer's options for `relative` in `dir`; `held`, when it is the cached file,
    /// may carry its Content-Type already.
    static file_response_options file_options(const directory& dir, std::string_view relative,
                                              const cached_file* held = nullptr) noexcept;

    std::vector<directory> dirs_;
};

}  // namespace tern::detail

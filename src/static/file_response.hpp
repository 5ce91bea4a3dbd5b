#pragma once
// The response for one regular file once it is found: which representation (precompressed
// sibling or the file itself), its validators, the conditional-request outcome (304, 412),
// the byte range (206, 416), and the header fields.

#include "http/response.hpp"
#include "static/file_cache.hpp"
#include "static/open_beneath.hpp"
#include "static/static_outcome.hpp"

#include <tern/header_field.hpp>

#include <span>
#include <string_view>

namespace tern::detail {

/// How a directory's files are answered.
struct file_response_options {
    std::string_view content_type;   ///< of the file as named in the request
    std::string_view cache_control;  ///< empty: no Cache-Control
    bool precompressed = true;       ///< look for `.br` / `.gz` siblings
};

/// Answers into `res` for `opened`, a regular file (its `dir` and `name` locate siblings):
/// a file body (200, 206) or a 304 (answered), or a 412 or 416 (status_only). Appends the
/// header fields to those `res` has. Precondition and range rules follow RFC 9110 13.2.2
/// and 14.2; see docs/static-files.md. Throws only std::bad_alloc.
static_outcome respond_with_file(opened_file opened, const file_response_options& options,
                                 std::span<const header_field> headers, response& res);

/// The same answer for a file a cache holds, read in with its siblings when
/// `options.precompressed`: a 200 or 206 carries the chosen representation's bytes (or the
/// part in range) as `res.body` instead of a file, with the same header fields.
static_outcome respond_with_cached(const cached_file& file, const file_response_options& options,
                                   std::span<const header_field> headers, response& res);

}  // namespace tern::detail

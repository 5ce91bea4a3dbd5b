#pragma once
// Validators of a file (ETag, Last-Modified) and the conditional requests built on them
// (RFC 9110 8.8 and 13): If-Match, If-Unmodified-Since, If-None-Match, If-Modified-Since,
// If-Range.

#include <tern/header_field.hpp>

#include "platform/file_status.hpp"

#include <ctime>
#include <span>
#include <string>
#include <string_view>

namespace tern::detail {

/// The strong ETag of a file from its size and modification time in nanoseconds, plus the
/// content coding when it is a precompressed variant, so that each representation has its
/// own tag: "\"<size hex>-<mtime ns hex>\"" or "\"<size hex>-<mtime ns hex>-br\"". The inode
/// is left out so that servers behind one load balancer agree.
std::string make_etag(const platform::file_status& st, std::string_view coding);

/// Whether the entity-tag list `value` (If-Match / If-None-Match syntax, or "*") holds a
/// tag matching `etag`: by strong comparison (neither weak, same opaque tag) or weak
/// (same opaque tag). A malformed member ends the list (what came before still counts).
bool etag_list_matches(std::string_view value, std::string_view etag, bool strong) noexcept;

/// The outcome of RFC 9110 13.2.2 steps 1 to 4 for a GET or HEAD.
enum class precondition {
    proceed,       ///< serve (200, or 206 if a Range applies)
    not_modified,  ///< 304
    failed,        ///< 412
};

/// Evaluates If-Match, If-Unmodified-Since, If-None-Match and If-Modified-Since in the
/// order of RFC 9110 13.2.2. A date field that is repeated or not a valid HTTP-date is
/// ignored (13.1.3, 13.1.4); If-Modified-Since counts only without If-None-Match.
precondition evaluate_preconditions(std::span<const header_field> headers, std::string_view etag,
                                    std::time_t mtime) noexcept;

/// RFC 9110 13.1.5: whether an If-Range `value` lets the Range apply: an entity tag that
/// strongly matches `etag`, or an HTTP-date equal to `mtime`. Anything else (a weak tag, a
/// different date, garbage) means the whole file is sent.
bool if_range_matches(std::string_view value, std::string_view etag, std::time_t mtime) noexcept;

}  // namespace tern::detail

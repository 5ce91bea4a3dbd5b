#pragma once
/// @file path_pattern.hpp
/// Parsing and validating a route pattern into segments.
///
/// Pattern grammar (Javalin's, checked once at registration so matching never has to):
///
/// - A pattern begins with '/'; segments are separated by '/'. A trailing slash is ignored
///   (`/users/` is `/users`), except in the root pattern `/`. An empty segment inside a
///   pattern (`/a//b`, `//`) is invalid.
/// - Literal segment: any characters except `{ } < > *`, at least one. It matches the same
///   text, case-sensitively and without percent-decoding.
/// - `{name}`: a whole segment; matches exactly one non-empty path segment (no '/').
/// - `<name>`: a whole segment, only as the last one; matches the rest of the path: one or
///   more characters, slashes included.
/// - `*`: a whole segment, never captured. As the last segment it matches the rest of the
///   path (one or more characters, slashes included); elsewhere exactly one non-empty
///   segment.
/// - Names are `[A-Za-z0-9_-]+` and unique within a pattern.
///
/// Anything else (`{}`, `{a`, `a{b}`, `/x*`, `<a>/b`, no leading '/', a repeated name)
/// throws std::invalid_argument naming the pattern and the fault.

#include <string>
#include <string_view>
#include <vector>

namespace tern::detail {

/// What one pattern segment matches.
enum class segment_kind {
    literal,        ///< The segment's text, exactly.
    param,          ///< `{name}`: one non-empty path segment, captured.
    wildcard,       ///< `*` before the last segment: one non-empty path segment, not captured.
    tail_param,     ///< `<name>` (last segment only): the rest of the path, captured.
    tail_wildcard,  ///< `*` as the last segment: the rest of the path, not captured.
};

/// One segment of a parsed pattern.
struct pattern_segment {
    segment_kind kind = segment_kind::literal;  ///< What the segment matches.
    std::string text;  ///< The literal text, the parameter name, or empty for `*`.
};

/// True when a segment of kind `k` consumes exactly one path segment without comparing text
/// (`{name}` and a non-final `*`); such segments have the same shape for duplicate checks.
constexpr bool matches_one_segment(segment_kind k) noexcept {
    return k == segment_kind::param || k == segment_kind::wildcard;
}

/// True when a segment of kind `k` consumes the rest of the path (`<name>`, a final `*`).
constexpr bool matches_tail(segment_kind k) noexcept {
    return k == segment_kind::tail_param || k == segment_kind::tail_wildcard;
}

/// A validated route pattern, split into segments (see the grammar above).
class path_pattern {
public:
    /// Parses `pattern`. Throws std::invalid_argument, naming the pattern and what is wrong,
    /// when it breaks the grammar.
    explicit path_pattern(std::string_view pattern);

    /// The pattern as written at registration (for messages).
    const std::string& text() const noexcept { return text_; }
    /// The segments in order; empty for the root pattern `/`.
    const std::vector<pattern_segment>& segments() const noexcept { return segments_; }
    /// True when every segment is a literal, so the pattern matches exactly one path.
    bool is_static() const noexcept { return all_literal_; }
    /// True when some segment is captured (`{name}` or `<name>`).
    bool captures() const noexcept { return captures_; }
    /// The one path a static pattern matches, trailing slash removed (`/` for the root).
    /// Only meaningful when `is_static()`.
    std::string static_path() const;

private:
    std::string text_;
    std::vector<pattern_segment> segments_;
    bool all_literal_ = true;
    bool captures_ = false;
};

/// `path` with one trailing slash removed, so `/users/` and `/users` route alike; `/` stays
/// `/`. The result views `path`.
std::string_view trim_trailing_slash(std::string_view path) noexcept;

}  // namespace tern::detail

#pragma once
// Before and after filters: handlers that run around the route's handler for every request
// whose path matches one of their patterns. Transport-free.

#include "routing/path_pattern.hpp"
#include "routing/router.hpp"

#include <tern/context.hpp>

#include <string_view>
#include <vector>

namespace tern::detail {

/// Whether `path` (not decoded, no query) matches `pattern` as a route would: literal
/// segments compare exactly, `{x}` and a non-final `*` take one non-empty segment, `<x>`
/// and a final `*` the rest of the path; a trailing slash is ignored.
bool pattern_matches(const path_pattern& pattern, std::string_view path) noexcept;

/// `pattern_matches`, and on a match the values of the pattern's `{x}` and `<x>` captures
/// (views into `path`, named by views into `pattern`) replace the contents of `params`.
bool pattern_captures(const path_pattern& pattern, std::string_view path,
                      std::vector<path_param>& params);

/// The filters of one stage (before or after), in registration order.
class filter_list {
public:
    /// Adds `h` for paths matching any of `patterns` (every path when empty). Throws
    /// std::invalid_argument for a bad pattern or an empty handler.
    void add(const std::vector<std::string>& patterns, handler h);

    /// Calls `fn(handler, pattern)` for each filter whose patterns match `path`, in order,
    /// while `fn` returns true. `pattern` is the one that matched when it captures path
    /// parameters (the filter reads those), else null (the filter sees the route's).
    template <class Fn>
    void for_each_matching(std::string_view path, Fn&& fn) const {
        for (const auto& f : filters_) {
            const path_pattern* matched = nullptr;
            if (applies(f, path, matched) && !fn(f.target, matched)) return;
        }
    }

    /// No filters at all.
    bool empty() const noexcept { return filters_.empty(); }

private:
    struct filter {
        std::vector<path_pattern> patterns;  ///< empty: every path
        handler target;
    };
    static bool applies(const filter& f, std::string_view path,
                        const path_pattern*& capturing) noexcept;

    std::vector<filter> filters_;
};

}  // namespace tern::detail

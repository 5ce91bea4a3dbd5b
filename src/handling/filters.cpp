#include "handling/filters.hpp"

#include <stdexcept>

namespace tern::detail {

namespace {

// The next segment of `path` from `pos` (which is just past a '/'): [pos, end).
std::string_view segment_at(std::string_view path, std::size_t pos) noexcept {
    const auto slash = path.find('/', pos);
    return path.substr(pos, slash == std::string_view::npos ? std::string_view::npos : slash - pos);
}

// The one matcher behind pattern_matches and pattern_captures: `capture(segment, text)` is
// called for each segment that takes path text, in order.
template <class Capture>
bool match_segments(const path_pattern& pattern, std::string_view path, Capture&& capture) {
    if (path.empty() || path.front() != '/') return false;
    path = trim_trailing_slash(path);
    const auto& segments = pattern.segments();
    if (segments.empty()) return path == "/";
    std::size_t pos = 1;  // just past a '/'
    for (std::size_t i = 0; i < segments.size(); ++i) {
        if (pos > path.size()) return false;  // the path ran out of segments
        const auto& seg = segments[i];
        if (matches_tail(seg.kind)) {
            if (pos >= path.size()) return false;  // one or more characters
            capture(seg, path.substr(pos));
            return true;
        }
        const auto text = segment_at(path, pos);
        if (text.empty()) return false;
        if (seg.kind == segment_kind::literal && text != seg.text) return false;
        capture(seg, text);
        pos += text.size() + 1;
    }
    return pos == path.size() + 1;  // every path segment consumed
}

}  // namespace

bool pattern_matches(const path_pattern& pattern, std::string_view path) noexcept {
    return match_segments(pattern, path, [](const pattern_segment&, std::string_view) noexcept {});
}

bool pattern_captures(const path_pattern& pattern, std::string_view path,
                      std::vector<path_param>& params) {
    params.clear();
    return match_segments(pattern, path, [&](const pattern_segment& seg, std::string_view text) {
        if (seg.kind == segment_kind::param || seg.kind == segment_kind::tail_param) {
            params.push_back({seg.text, text});
        }
    });
}

void filter_list::add(const std::vector<std::string>& patterns, handler h) {
    if (!h) throw std::invalid_argument("tern: empty filter handler");
    filter f;
    for (const auto& p : patterns) f.patterns.emplace_back(p);
    f.target = std::move(h);
    filters_.push_back(std::move(f));
}

bool filter_list::applies(const filter& f, std::string_view path,
                          const path_pattern*& capturing) noexcept {
    if (f.patterns.empty()) return true;
    for (const auto& p : f.patterns) {
        if (pattern_matches(p, path)) {
            capturing = p.captures() ? &p : nullptr;
            return true;
        }
    }
    return false;
}

}  // namespace tern::detail

#include "web/linear_search.hpp"

#include <cstring>

namespace tern::detail {

linear_searcher::linear_searcher(std::string_view pattern)
    : pattern_(pattern), fallback_(pattern.size(), 0) {
    std::size_t k = 0;
    for (std::size_t j = 1; j < pattern_.size(); ++j) {
        while (k > 0 && pattern_[j] != pattern_[k]) k = fallback_[k - 1];
        if (pattern_[j] == pattern_[k]) ++k;
        fallback_[j] = k;
    }
}

std::size_t linear_searcher::find(std::string_view text, std::size_t from) const noexcept {
    const std::size_t m = pattern_.size();
    if (from > text.size()) return std::string_view::npos;
    if (m == 0) return from;
    const char* const data = text.data();
    const std::size_t n = text.size();
    std::size_t i = from;
    std::size_t j = 0;  // pattern bytes matched so far, ending at data[i - 1]
    while (i < n) {
        if (j == 0) {
            // Nothing matched: memchr to the next possible start (each byte passed once).
            const void* hit = std::memchr(data + i, pattern_[0], n - i);
            const std::size_t next =
                hit ? static_cast<std::size_t>(static_cast<const char*>(hit) - data) : n;
            steps_ += next - i;
            i = next;
            if (i == n) break;
        }
        // Each comparison either advances i or shrinks j, which only i's advances grew:
        // at most 2 (n - from) comparisons in all.
        ++steps_;
        if (data[i] == pattern_[j]) {
            ++i;
            if (++j == m) return i - m;
        } else if (j == 0) {
            ++i;
        } else {
            j = fallback_[j - 1];
        }
    }
    return std::string_view::npos;
}

}  // namespace tern::detail

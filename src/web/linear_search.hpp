#pragma once
// A substring search whose time is linear in the text whatever the pattern: the
// Knuth-Morris-Pratt automaton. std::boyer_moore_horspool_searcher is not (a 70-byte boundary
// of 'a's over a body of 'a's compares most of the pattern at every byte), and memmem's
// complexity is the C library's to choose; multipart bodies are the client's to choose.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tern::detail {

/// Finds one pattern, again and again, in texts.
class linear_searcher {
public:
    /// A searcher for `pattern` (copied).
    explicit linear_searcher(std::string_view pattern);

    /// The position of the first occurrence of the pattern in `text` at or after `from`;
    /// std::string_view::npos when there is none. At most 2 * (text.size() - from) steps.
    std::size_t find(std::string_view text, std::size_t from = 0) const noexcept;

    /// Steps all find calls have taken: bytes skipped while looking for the pattern's first
    /// byte plus comparisons with the pattern. Lets tests prove linearity without timing.
    std::uint64_t steps() const noexcept { return steps_; }

private:
    std::string pattern_;
    // fallback_[j]: the length of the longest proper prefix of pattern_[0, j] that is also
    // its suffix, where matching resumes after a mismatch at j + 1.
    std::vector<std::size_t> fallback_;
    mutable std::uint64_t steps_ = 0;
};

}  // namespace tern::detail

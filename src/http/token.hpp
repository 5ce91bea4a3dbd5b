#pragma once
// Character classes of HTTP syntax: RFC 9110 5.6.2 tokens (method and header field names),
// field-value bytes (5.5), ASCII case folding and RFC 3986 HEXDIG (percent-encoding, IP literals).

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

namespace tern::detail {

/// DIGIT (RFC 5234 B.1).
constexpr bool is_digit(char c) noexcept { return c >= '0' && c <= '9'; }

/// ALPHA (RFC 5234 B.1).
constexpr bool is_alpha(char c) noexcept {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/// tchar = "!" / "#" / "$" / "%" / "&" / "'" / "*" / "+" / "-" / "." / "^" / "_" / "`" /
/// "|" / "~" / DIGIT / ALPHA.
constexpr bool is_tchar(char c) noexcept {
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) return true;
    return std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}

/// token = 1*tchar.
constexpr bool is_token(std::string_view s) noexcept {
    if (s.empty()) return false;
    for (char c : s) {
        if (!is_tchar(c)) return false;
    }
    return true;
}

/// Whether `s` holds a byte a field value may not carry (RFC 9110 5.5): a control character
/// (0x00-0x1F, DEL) other than HTAB. CR, LF and NUL would split or end the header block; the
/// others make proxies refuse the message (nginx answers 502).
constexpr bool has_control(std::string_view s) noexcept {
    for (const char c : s) {
        const auto u = static_cast<unsigned char>(c);
        if ((u < 0x20 && c != '\t') || u == 0x7f) return true;
    }
    return false;
}

/// `c` with ASCII A-Z mapped to a-z; every other byte unchanged (header names, tokens and
/// other protocol elements compare case-insensitively in ASCII only).
constexpr char ascii_lower(char c) noexcept {
    return c >= 'A' && c <= 'Z' ? static_cast<char>(c + ('a' - 'A')) : c;
}

/// `w` (eight bytes) with ASCII A-Z mapped to a-z in each byte, every other byte unchanged.
inline std::uint64_t ascii_lower_word(std::uint64_t w) noexcept {
    constexpr std::uint64_t ones = 0x0101010101010101U;
    constexpr std::uint64_t high = ones * 0x80U;
    // Within each byte's low seven bits (no carry into the next byte): at least 'A', and
    // above 'Z'; a byte with its high bit set is left alone.
    const std::uint64_t low = w & ~high;
    const std::uint64_t at_least_a = low + ones * (0x80U - 'A');
    const std::uint64_t above_z = low + ones * (0x80U - 'Z' - 1);
    const std::uint64_t upper = at_least_a & ~above_z & ~w & high;
    return w | (upper >> 2);  // 0x80 >> 2 is 0x20, the case bit
}

/// Copies `n` bytes from `in` to `out` with ASCII A-Z mapped to a-z (as ascii_lower, every
/// other byte unchanged), eight bytes at a time: each response field name tern sends over
/// HTTP/2 and HTTP/3 goes through here, where a byte at a time cost a few percent of a
/// static file's answer. `out` and `in` do not overlap.
inline void ascii_lower_copy(char* out, const char* in, std::size_t n) noexcept {
    if (n < 8) {
        std::uint64_t w = 0;
        // Byte by byte into a word: the compiler makes no call of this.
        for (std::size_t i = 0; i < n; ++i)
            w |= std::uint64_t{static_cast<unsigned char>(in[i])} << (8 * i);
        w = ascii_lower_word(w);
        for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<char>(w >> (8 * i));
        return;
    }
    std::size_t at = 0;
    for (;; at += 8) {
        if (at + 8 > n) at = n - 8;  // the last word overlaps the one before: same bytes out
        std::uint64_t w = 0;
        std::memcpy(&w, in + at, 8);
        w = ascii_lower_word(w);
        std::memcpy(out + at, &w, 8);
        if (at + 8 == n) return;
    }
}

/// ASCII case-insensitive equality, for header names and tokens (RFC 9110 5.1).
constexpr bool iequals(std::string_view a, std::string_view b) noexcept {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i) {
        if (ascii_lower(a[i]) != ascii_lower(b[i])) return false;
    }
    return true;
}

/// The value of hex digit `c` (either case), or -1 when `c` is not one.
constexpr int hex_value(char c) noexcept {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

}  // namespace tern::detail

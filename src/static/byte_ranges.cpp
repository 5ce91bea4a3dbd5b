#include "static/byte_ranges.hpp"

#include "http/header_values.hpp"
#include "http/token.hpp"

#include <limits>

namespace tern::detail {

namespace {

/// Reads 1*DIGIT, saturating at the largest uint64 (a first-pos that large is past any
/// file, a last-pos that large is clamped, a suffix that large is the whole file).
bool read_number(std::string_view s, std::uint64_t& out) noexcept {
    if (s.empty()) return false;
    constexpr std::uint64_t max = std::numeric_limits<std::uint64_t>::max();
    std::uint64_t v = 0;
    for (const char c : s) {
        if (c < '0' || c > '9') return false;
        const auto d = static_cast<std::uint64_t>(c - '0');
        v = v > (max - d) / 10 ? max : v * 10 + d;
    }
    out = v;
    return true;
}

}  // namespace

byte_range parse_byte_range(std::string_view value, std::uint64_t size) noexcept {
    byte_range full;
    value = trim_ows(value);
    const std::size_t eq = value.find('=');
    if (eq == std::string_view::npos || !iequals(value.substr(0, eq), "bytes")) return full;

    // Exactly one non-empty member; a second one means "several ranges": not served.
    std::string_view spec;
    std::string_view rest = value.substr(eq + 1);
    while (!rest.empty()) {
        const std::size_t comma = rest.find(',');
        const std::string_view member = trim_ows(rest.substr(0, comma));
        rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
        if (member.empty()) continue;
        if (!spec.empty()) return full;
        spec = member;
    }
    const std::size_t dash = spec.find('-');
    if (dash == std::string_view::npos) return full;

    byte_range r;
    if (dash == 0) {
        // suffix-range: the last n bytes (RFC 9110 14.1.1)
        std::uint64_t n = 0;
        if (!read_number(spec.substr(1), n)) return full;
        if (n == 0 || size == 0) {
            r.what = byte_range::kind::unsatisfiable;
            return r;
        }
        r.length = n < size ? n : size;
        r.offset = size - r.length;
        r.what = byte_range::kind::partial;
        return r;
    }
    std::uint64_t first = 0;
    if (!read_number(spec.substr(0, dash), first)) return full;
    std::uint64_t last = std::numeric_limits<std::uint64_t>::max();
    const std::string_view last_text = spec.substr(dash + 1);
    if (!last_text.empty()) {
        if (!read_number(last_text, last) || last < first) return full;
    }
    if (first >= size) {
        r.what = byte_range::kind::unsatisfiable;
        return r;
    }
    if (last > size - 1) last = size - 1;
    r.what = byte_range::kind::partial;
    r.offset = first;
    r.length = last - first + 1;
    return r;
}

}  // namespace tern::detail

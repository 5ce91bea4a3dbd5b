#include "ws/utf8.hpp"

#include <array>
#include <cstddef>
#include <cstring>

namespace tern::detail::ws {

namespace {

// The validator's states: what the next byte of a character must be (RFC 3629 section 4).
// `accept` is between characters; the others expect a continuation byte in [lo, hi] and then
// move to `next`. Only the second byte of a sequence has a range narrower than 80..BF: that
// is where overlongs (E0 80..9F, F0 80..8F), surrogates (ED A0..BF) and code points above
// U+10FFFF (F4 90..BF) are refused, at the first byte that makes them so.
enum state : std::uint32_t {
    accept = 0,
    need1,     // one more 80..BF
    need2,     // two more 80..BF
    need3,     // three more 80..BF
    after_e0,  // A0..BF, then one more
    after_ed,  // 80..9F, then one more
    after_f0,  // 90..BF, then two more
    after_f4,  // 80..8F, then two more
    failed,
};

struct continuation {
    std::uint8_t lo;
    std::uint8_t hi;
    std::uint32_t next;
};

constexpr std::array<continuation, 8> continuations = {{
    {0, 0, failed},  // accept: not used
    {0x80, 0xBF, accept},
    {0x80, 0xBF, need1},
    {0x80, 0xBF, need2},
    {0xA0, 0xBF, need1},
    {0x80, 0x9F, need1},
    {0x90, 0xBF, need2},
    {0x80, 0x8F, need2},
}};

// The state after lead byte `b` (not ASCII).
constexpr std::uint32_t after_lead(std::uint8_t b) noexcept {
    if (b >= 0xC2 && b <= 0xDF) return need1;  // C0, C1: overlong two-byte forms
    if (b == 0xE0) return after_e0;
    if (b == 0xED) return after_ed;
    if (b >= 0xE1 && b <= 0xEF) return need2;
    if (b == 0xF0) return after_f0;
    if (b >= 0xF1 && b <= 0xF3) return need3;
    if (b == 0xF4) return after_f4;
    return failed;  // 80..BF without a lead, C0, C1, F5..FF
}

constexpr std::uint64_t high_bits = 0x8080808080808080ULL;

}  // namespace

bool utf8_validator::feed(std::string_view piece) noexcept {
    std::uint32_t s = state_;
    const auto* p = reinterpret_cast<const std::uint8_t*>(piece.data());
    const std::size_t n = piece.size();
    std::size_t i = 0;
    while (i < n && s != failed) {
        if (s == accept) {
            // ASCII runs, eight bytes at a time: text messages are mostly ASCII.
            while (i + 8 <= n) {
                std::uint64_t word = 0;
                std::memcpy(&word, p + i, sizeof word);
                if ((word & high_bits) != 0) break;
                i += 8;
            }
            if (i == n) break;
            const std::uint8_t b = p[i++];
            if (b >= 0x80) s = after_lead(b);
            continue;
        }
        const std::uint8_t b = p[i++];
        const continuation& c = continuations[s];
        s = (b >= c.lo && b <= c.hi) ? c.next : static_cast<std::uint32_t>(failed);
    }
    state_ = s;
    return s != failed;
}

bool is_valid_utf8(std::string_view s) noexcept {
    utf8_validator v;
    return v.feed(s) && v.complete();
}

}  // namespace tern::detail::ws

#include "h2/request_check.hpp"

#include <array>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <limits>

namespace tern::h2 {

namespace {

using namespace std::string_view_literals;

// RFC 9110 5.6.2 tchar, lower case only (RFC 9113 8.2.1: upper case is malformed): a table,
// as every request's every field name goes through it.
constexpr std::array<bool, 256> name_chars = [] {
    std::array<bool, 256> t{};
    for (unsigned c = 'a'; c <= 'z'; ++c) t[c] = true;
    for (unsigned c = '0'; c <= '9'; ++c) t[c] = true;
    for (const char c : "!#$%&'*+-.^_`|~"sv) t[static_cast<unsigned char>(c)] = true;
    return t;
}();

bool name_char(unsigned char c) noexcept { return name_chars[c]; }

bool valid_name(std::string_view name) noexcept {
    if (name.empty()) return false;
    for (const char c : name) {
        if (!name_char(static_cast<unsigned char>(c))) return false;
    }
    return true;
}

// A method is a token, in any case (RFC 9110 9.1).
bool valid_method(std::string_view method) noexcept {
    if (method.empty()) return false;
    for (const char ch : method) {
        auto c = static_cast<unsigned char>(ch);
        if (c >= 'A' && c <= 'Z') c = static_cast<unsigned char>(c - 'A' + 'a');
        if (!name_char(c)) return false;
    }
    return true;
}

// A value byte refused: a control other than HTAB, or DEL.
bool refused_value_byte(unsigned char c) noexcept { return (c < 0x20 && c != '\t') || c == 0x7f; }

// Whether any of the 8 bytes of `w` is below 0x20 or is 0x7f (a HTAB among them counts too:
// the caller looks closer). Bytes from 0x80 up (obs-text) are never flagged.
bool word_may_refuse(std::uint64_t w) noexcept {
    constexpr std::uint64_t ones = 0x0101010101010101;
    constexpr std::uint64_t highs = 0x8080808080808080;
    const std::uint64_t below_space = (w - ones * 0x20) & ~w & highs;
    const std::uint64_t del = w ^ (ones * 0x7f);
    const std::uint64_t is_del = (del - ones) & ~del & highs;
    return (below_space | is_del) != 0;
}

// RFC 9113 8.2.1: no NUL, CR or LF, and no white space at either end; other controls are
// refused too (RFC 9110 5.5, field-vchar), as nghttp2 did. Eight bytes at a time, a byte at
// a time only where a word holds a control (every request's every value goes through it).
bool valid_value(std::string_view value) noexcept {
    if (!value.empty() && (value.front() == ' ' || value.front() == '\t' || value.back() == ' ' ||
                           value.back() == '\t')) {
        return false;
    }
    const char* p = value.data();
    std::size_t left = value.size();
    for (; left >= 8; p += 8, left -= 8) {
        std::uint64_t w = 0;
        std::memcpy(&w, p, 8);
        if (word_may_refuse(w)) {
            for (int i = 0; i < 8; ++i) {
                if (refused_value_byte(static_cast<unsigned char>(p[i]))) return false;
            }
        }
    }
    for (; left > 0; ++p, --left) {
        if (refused_value_byte(static_cast<unsigned char>(*p))) return false;
    }
    return true;
}

bool ascii_iequals(std::string_view a, std::string_view b) noexcept {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i) {
        auto x = static_cast<unsigned char>(a[i]);
        if (x >= 'A' && x <= 'Z') x = static_cast<unsigned char>(x - 'A' + 'a');
        if (x != static_cast<unsigned char>(b[i])) return false;
    }
    return true;
}

}  // namespace

void request_check::begin(bool trailer) noexcept {
    trailer_ = trailer;
    regular_seen_ = false;
}

bool request_check::field(std::string_view name, std::string_view value) noexcept {
    if (!name.empty() && name.front() == ':') {
        // 8.3: pseudo-fields only in the head, before every regular field, each once.
        if (trailer_ || regular_seen_) return false;
        std::uint8_t which = 0;
        if (name == ":method"sv) {
            which = method;
            connect_ = value == "CONNECT"sv;
            options_ = value == "OPTIONS"sv;
            if (!valid_method(value)) return false;
        } else if (name == ":scheme"sv) {
            which = scheme;
        } else if (name == ":path"sv) {
            which = path;
            empty_path_ = value.empty();
            asterisk_ = value == "*"sv;
        } else if (name == ":authority"sv) {
            which = authority;
        } else {
            return false;  // :status, :protocol (not enabled) or unknown
        }
        if ((pseudo_ & which) != 0) return false;
        pseudo_ = static_cast<std::uint8_t>(pseudo_ | which);
        return valid_value(value);
    }
    regular_seen_ = true;
    if (!valid_name(name) || !valid_value(value)) return false;
    switch (name.size()) {
        case 2:
            // 8.2.2: te carries "trailers" and nothing else.
            return name != "te"sv || ascii_iequals(value, "trailers"sv);
        case 7:
            return name != "upgrade"sv;
        case 10:
            return name != "connection"sv && name != "keep-alive"sv;
        case 14:
            if (name == "content-length"sv && !trailer_) {
                std::uint64_t n = 0;
                const auto* end = value.data() + value.size();
                const auto [at, ec] = std::from_chars(value.data(), end, n);
                if (value.empty() || ec != std::errc{} || at != end ||
                    n > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
                    return false;
                }
                if (content_length_ != -1 && static_cast<std::uint64_t>(content_length_) != n) {
                    return false;
                }
                content_length_ = static_cast<std::int64_t>(n);
            }
            return true;
        case 16:
            return name != "proxy-connection"sv;
        case 17:
            return name != "transfer-encoding"sv;
        default:
            return true;
    }
}

bool request_check::head_done(bool ended) const noexcept {
    if (trailer_) return true;
    if ((pseudo_ & method) == 0) return false;
    if (connect_) {
        if ((pseudo_ & (scheme | path)) != 0 || (pseudo_ & authority) == 0) return false;
    } else {
        if ((pseudo_ & (scheme | path)) != (scheme | path) || empty_path_) return false;
        if (asterisk_ && !options_) return false;
    }
    return !ended || content_length_ <= 0;
}

bool request_check::data(std::uint64_t bytes) noexcept {
    received_ += bytes;
    return content_length_ == -1 || received_ <= static_cast<std::uint64_t>(content_length_);
}

bool request_check::ended() const noexcept {
    return content_length_ == -1 || received_ == static_cast<std::uint64_t>(content_length_);
}

}  // namespace tern::h2

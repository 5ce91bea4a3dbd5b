#include "http/host.hpp"

#include "http/token.hpp"

#include <array>

namespace tern::detail {

namespace {

bool is_hex(char c) noexcept { return hex_value(c) >= 0; }

bool is_digits(std::string_view s) noexcept {
    for (char c : s) {
        if (c < '0' || c > '9') return false;
    }
    return true;
}

// RFC 3986 3.2.2 reg-name: unreserved / pct-encoded / sub-delims, except ','. A comma is
// a valid sub-delim but no DNS name holds one, and "a,b" is what a recipient that combines
// two Host lines into a list (RFC 9110 5.3) makes of them: refused, so it is never read as
// one host here and as two elsewhere.
// unreserved / sub-delims but ',' (a byte table: the check runs on every request's Host).
constexpr std::array<bool, 256> reg_name_bytes = [] {
    std::array<bool, 256> t{};
    for (int c = 'a'; c <= 'z'; ++c) t[static_cast<unsigned char>(c)] = true;
    for (int c = 'A'; c <= 'Z'; ++c) t[static_cast<unsigned char>(c)] = true;
    for (int c = '0'; c <= '9'; ++c) t[static_cast<unsigned char>(c)] = true;
    for (const char c : std::string_view("-._~!$&'()*+;=")) t[static_cast<unsigned char>(c)] = true;
    return t;
}();

bool is_reg_name(std::string_view s) noexcept {
    for (std::size_t i = 0; i < s.size(); ++i) {
        const char c = s[i];
        if (reg_name_bytes[static_cast<unsigned char>(c)]) continue;
        if (c == '%' && i + 2 < s.size() && is_hex(s[i + 1]) && is_hex(s[i + 2])) {
            i += 2;
            continue;
        }
        return false;
    }
    return true;
}

}  // namespace

// RFC 9112 3.2: Host = uri-host [ ":" port ]. An IP-literal is checked for its alphabet
// only (hex digits, ':', '.', and the "v" future form's characters).
bool is_valid_host(std::string_view host) noexcept {
    std::string_view port;
    if (!host.empty() && host.front() == '[') {
        const auto close = host.find(']');
        if (close == std::string_view::npos) return false;
        for (char c : host.substr(1, close - 1)) {
            if (!is_hex(c) && c != ':' && c != '.' && c != 'v' && c != 'V') return false;
        }
        const auto rest = host.substr(close + 1);
        if (rest.empty()) return true;
        if (rest.front() != ':') return false;
        port = rest.substr(1);
    } else {
        const auto colon = host.find(':');
        if (colon != std::string_view::npos) {
            port = host.substr(colon + 1);
            host = host.substr(0, colon);
        }
        if (!is_reg_name(host)) return false;
    }
    return is_digits(port);
}

}  // namespace tern::detail

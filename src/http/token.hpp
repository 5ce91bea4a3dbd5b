#pragma once
// RFC 9110 5.6.2 tokens: what method names and header field names are made of.

#include <string_view>

namespace tern::detail {

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

}  // namespace tern::detail

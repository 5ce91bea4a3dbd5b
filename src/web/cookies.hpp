#pragma once
// Cookies: reading the Cookie request header and writing Set-Cookie (RFC 6265).
// Transport-free: strings in, strings out.

#include <tern/cookie.hpp>

#include <string>
#include <string_view>
#include <vector>

namespace tern::detail {

/// One cookie a client sent: views into the Cookie header value.
struct cookie_pair {
    std::string_view name;
    std::string_view value;  ///< Without the surrounding DQUOTEs when the value had them.
};

/// Appends the cookie-pairs of one Cookie header value to `out`, in order (RFC 6265 5.4 /
/// 4.2.1): pairs are separated by ';' and optional spaces; a pair without '=' or with an
/// empty or non-token name is skipped; a value wrapped in DQUOTEs loses them. Never throws
/// except std::bad_alloc.
void parse_cookie_header(std::string_view value, std::vector<cookie_pair>& out);

/// The value of a Set-Cookie header for `name`=`value` with `options`, e.g.
/// "id=42; Path=/; Max-Age=3600; Secure; HttpOnly; SameSite=Lax". Throws
/// std::invalid_argument when `name` is not an RFC 9110 token, when `value` has a byte
/// outside cookie-octet (RFC 6265 4.1.1: no CTLs, whitespace, DQUOTE, comma, semicolon,
/// backslash; a DQUOTE-wrapped value is refused too), when path or domain contain ';' or
/// a CTL, or for SameSite=None without Secure. Expires is clamped to 1970..9999.
std::string format_set_cookie(std::string_view name, std::string_view value,
                              const cookie_options& options);

}  // namespace tern::detail

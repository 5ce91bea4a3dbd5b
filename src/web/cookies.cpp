#include "web/cookies.hpp"

#include "http/date.hpp"
#include "http/header_values.hpp"
#include "http/token.hpp"

#include <algorithm>
#include <ctime>
#include <stdexcept>

namespace tern::detail {

namespace {

/// cookie-octet (RFC 6265 4.1.1): US-ASCII except CTLs, whitespace, DQUOTE, comma,
/// semicolon and backslash.
constexpr bool is_cookie_octet(char c) noexcept {
    const auto u = static_cast<unsigned char>(c);
    return u >= 0x21 && u <= 0x7E && c != '"' && c != ',' && c != ';' && c != '\\';
}

/// Whether `s` may be a Path or Domain attribute value: no ';' (it would start another
/// attribute) and no CTL (CR and LF would end the header).
bool is_attribute_value(std::string_view s) noexcept {
    return std::none_of(s.begin(), s.end(), [](char c) {
        const auto u = static_cast<unsigned char>(c);
        return c == ';' || u < 0x20 || u == 0x7F;
    });
}

/// `expires` as seconds since the epoch, clamped to 1970-01-01 .. 9999-12-31 so that the
/// IMF-fixdate has a four-digit year. Any date before 1970 means "already expired", and so
/// does the epoch itself.
std::time_t expires_seconds(std::chrono::system_clock::time_point expires) noexcept {
    constexpr long long last = 253'402'300'799;  // 9999-12-31T23:59:59Z
    const auto since_epoch = std::chrono::floor<std::chrono::seconds>(expires.time_since_epoch());
    return static_cast<std::time_t>(std::clamp<long long>(since_epoch.count(), 0, last));
}

}  // namespace

void parse_cookie_header(std::string_view value, std::vector<cookie_pair>& out) {
    while (!value.empty()) {
        const std::size_t semicolon = value.find(';');
        const std::string_view pair = value.substr(0, semicolon);
        value =
            semicolon == std::string_view::npos ? std::string_view{} : value.substr(semicolon + 1);
        const std::size_t equals = pair.find('=');
        if (equals == std::string_view::npos) continue;
        const std::string_view name = trim_ows(pair.substr(0, equals));
        if (!is_token(name)) continue;
        std::string_view cookie_value = trim_ows(pair.substr(equals + 1));
        if (cookie_value.size() >= 2 && cookie_value.front() == '"' && cookie_value.back() == '"') {
            cookie_value = cookie_value.substr(1, cookie_value.size() - 2);
        }
        out.push_back({name, cookie_value});
    }
}

std::string format_set_cookie(std::string_view name, std::string_view value,
                              const cookie_options& options) {
    if (!is_token(name)) throw std::invalid_argument("cookie name is not an RFC 9110 token");
    if (!std::all_of(value.begin(), value.end(), is_cookie_octet)) {
        throw std::invalid_argument(
            "cookie value has a character a cookie may not carry (RFC 6265 4.1.1); encode it "
            "first");
    }
    if (!is_attribute_value(options.path)) {
        throw std::invalid_argument("cookie path contains ';' or a control character");
    }
    if (!is_attribute_value(options.domain)) {
        throw std::invalid_argument("cookie domain contains ';' or a control character");
    }
    if (options.same_site == tern::same_site::none && !options.secure) {
        throw std::invalid_argument("a cookie with SameSite=None must also be Secure");
    }

    std::string out;
    out.reserve(name.size() + value.size() + options.path.size() + options.domain.size() + 96);
    out.append(name);
    out += '=';
    out.append(value);
    if (!options.path.empty()) {
        out += "; Path=";
        out += options.path;
    }
    if (!options.domain.empty()) {
        out += "; Domain=";
        out += options.domain;
    }
    if (options.max_age) {
        out += "; Max-Age=";
        out += std::to_string(std::max<std::chrono::seconds::rep>(options.max_age->count(), 0));
    }
    if (options.expires) {
        char date[29];
        format_http_date(expires_seconds(*options.expires), date);
        out += "; Expires=";
        out.append(date, sizeof date);
    }
    if (options.secure) out += "; Secure";
    if (options.http_only) out += "; HttpOnly";
    switch (options.same_site) {
        case tern::same_site::unset:
            break;
        case tern::same_site::lax:
            out += "; SameSite=Lax";
            break;
        case tern::same_site::strict:
            out += "; SameSite=Strict";
            break;
        case tern::same_site::none:
            out += "; SameSite=None";
            break;
    }
    return out;
}

}  // namespace tern::detail

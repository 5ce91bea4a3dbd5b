#pragma once
/// @file cookie.hpp
/// The attributes of a cookie a response sets (RFC 6265 4.1).

#include <chrono>
#include <optional>
#include <string>

namespace tern {

/// The SameSite attribute of a cookie.
enum class same_site {
    unset,   ///< No SameSite attribute (the browser's default applies, usually Lax).
    lax,     ///< `SameSite=Lax`
    strict,  ///< `SameSite=Strict`
    none,    ///< `SameSite=None` (browsers require Secure with it; tern refuses it without)
};

/// Attributes of a `Set-Cookie` header (see `context::cookie`). The defaults give a cookie
/// for the whole site that lasts the browser session.
struct cookie_options {
    std::string path = "/";  ///< `Path`; empty: no Path attribute.
    std::string domain;      ///< `Domain`; empty: the cookie stays on the host that set it.
    /// `Max-Age` in seconds; unset: a session cookie. 0 or less deletes the cookie.
    std::optional<std::chrono::seconds> max_age;
    /// `Expires` (written as an IMF-fixdate); unset: none.
    std::optional<std::chrono::system_clock::time_point> expires;
    bool secure = false;                                 ///< `Secure`: sent over HTTPS only.
    bool http_only = false;                              ///< `HttpOnly`: hidden from scripts.
    tern::same_site same_site = tern::same_site::unset;  ///< `SameSite`
};

}  // namespace tern

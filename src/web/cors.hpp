#pragma once
// CORS (the Fetch standard's CORS protocol, https://fetch.spec.whatwg.org/#http-cors-protocol):
// answering preflights and adding Access-Control-* headers to responses. Transport-free.

#include "http/request.hpp"
#include "http/response.hpp"

#include <tern/config.hpp>

#include <string>
#include <vector>

namespace tern::detail {

/// A validated cors_config, ready to answer requests. Safe to use from several threads once
/// built (all members const).
class cors_policy {
public:
    /// Checks `config`: at least one origin; each origin "null" or "scheme://host[:port]"
    /// without path, trailing slash, userinfo or the scheme's default port, or "*" as the
    /// only entry; methods and header names RFC 9110 tokens ("*" not a method, "*" in
    /// allowed_headers only alone); a non-negative max_age; credentials together with "*"
    /// refused. Throws std::invalid_argument naming the fault.
    explicit cors_policy(const cors_config& config);

    /// A CORS preflight: OPTIONS with Origin and Access-Control-Request-Method.
    static bool is_preflight(const request& req) noexcept;

    /// Answers a preflight into `res` (which the caller has cleared): 204 with
    /// Access-Control-Allow-Origin (the request's origin, or "*" when any origin is allowed
    /// and credentials are off), -Allow-Methods (the requested method), -Allow-Headers (the
    /// requested headers when allowed), -Allow-Credentials when on, -Max-Age when > 0, and
    /// `Vary: Origin, Access-Control-Request-Method, Access-Control-Request-Headers`.
    /// When the origin, the method or one of the requested headers is not allowed: 403 with
    /// a short text body and no Access-Control-* headers.
    void answer_preflight(const request& req, response& res) const;

    /// Adds to an actual (non-preflight) response. With the "*" origin (credentials are then
    /// off): Access-Control-Allow-Origin "*" and -Expose-Headers on every response, with or
    /// without Origin, and no Vary — "*" also covers the "null" origin. With a list:
    /// `Vary: Origin` on every response (merged with an existing Vary), and, for a request
    /// whose Origin is listed ("null" only when listed), Access-Control-Allow-Origin (that
    /// origin), -Allow-Credentials when on and -Expose-Headers when configured. A response
    /// that already has Access-Control-Allow-Origin (the handler answered CORS itself) gets
    /// no Access-Control-* field from here.
    void decorate(const request& req, response& res) const;

private:
    bool any_origin_ = false;
    std::vector<std::string> origins_;  // compared case-insensitively
    std::vector<std::string> methods_;
    bool any_header_ = false;
    std::vector<std::string> headers_;  // compared case-insensitively
    std::string exposed_;               // joined with ", "
    bool credentials_ = false;
    std::string max_age_;  // empty: none
};

}  // namespace tern::detail

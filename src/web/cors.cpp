#include "web/cors.hpp"

#include "http/header_values.hpp"
#include "http/token.hpp"
#include "web/compression.hpp"

#include <algorithm>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace tern::detail {

namespace {

/// RFC 3986 3.1: scheme = ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ).
bool is_scheme(std::string_view s) noexcept {
    if (s.empty() || !is_alpha(s.front())) return false;
    return std::all_of(s.begin(), s.end(), [](char c) {
        return is_alpha(c) || is_digit(c) || c == '+' || c == '-' || c == '.';
    });
}

/// A host as browsers serialize it in an origin: a bracketed IPv6 literal, or an ASCII
/// (punycoded) name or IPv4 address made of unreserved characters (RFC 3986 3.2.2).
bool is_origin_host(std::string_view s) noexcept {
    if (s.size() > 2 && s.front() == '[' && s.back() == ']') {
        const std::string_view inner = s.substr(1, s.size() - 2);
        return std::all_of(inner.begin(), inner.end(),
                           [](char c) { return hex_value(c) >= 0 || c == ':' || c == '.'; });
    }
    return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
        return is_alpha(c) || is_digit(c) || c == '-' || c == '.' || c == '_' || c == '~';
    });
}

/// Why `origin` is not an origin serialization (scheme "://" host [":" port], Fetch's
/// "serialization of an origin"), or an empty view when it is one.
std::string_view origin_fault(std::string_view origin) noexcept {
    const std::size_t sep = origin.find("://");
    if (sep == std::string_view::npos || !is_scheme(origin.substr(0, sep))) {
        return "is not scheme://host[:port]";
    }
    const std::string_view scheme = origin.substr(0, sep);
    std::string_view authority = origin.substr(sep + 3);
    if (authority.find_first_of("/?#") != std::string_view::npos) {
        return "has a path, query or trailing slash (an origin is scheme://host[:port] only)";
    }
    std::string_view port;
    const std::size_t colon = authority.rfind(':');
    if (colon != std::string_view::npos && authority.find(']', colon) == std::string_view::npos) {
        port = authority.substr(colon + 1);
        authority = authority.substr(0, colon);
        if (port.empty() || port.size() > 5 || !std::all_of(port.begin(), port.end(), is_digit)) {
            return "has an invalid port";
        }
        unsigned long number = 0;
        for (char c : port) number = number * 10 + static_cast<unsigned long>(c - '0');
        if (number > 65535) return "has an invalid port";
    }
    if (!is_origin_host(authority)) return "has an invalid host";
    // Browsers leave the scheme's default port out of Origin, so such an entry never matches.
    if ((iequals(scheme, "http") && port == "80") || (iequals(scheme, "https") && port == "443")) {
        return "names the scheme's default port, which browsers leave out of Origin";
    }
    return {};
}

[[noreturn]] void refuse(std::string_view what, std::string_view value, std::string_view why) {
    std::string message = "cors: ";
    message.append(what).append(" \"").append(value).append("\" ").append(why);
    throw std::invalid_argument(message);
}

bool contains_ci(const std::vector<std::string>& list, std::string_view s) noexcept {
    return std::any_of(list.begin(), list.end(),
                       [s](const std::string& item) { return iequals(item, s); });
}

bool is_simple_method(std::string_view m) noexcept {
    return m == "GET" || m == "HEAD" || m == "POST";
}

bool origin_allowed(bool any_origin, const std::vector<std::string>& origins,
                    std::string_view origin) noexcept {
    if (origin.empty()) return false;
    return any_origin || contains_ci(origins, origin);
}

}  // namespace

cors_policy::cors_policy(const cors_config& config) : credentials_(config.allow_credentials) {
    if (config.allowed_origins.empty()) {
        throw std::invalid_argument("cors: allowed_origins is empty (list origins, or \"*\")");
    }
    for (const auto& origin : config.allowed_origins) {
        if (origin == "*") {
            if (config.allowed_origins.size() != 1) {
                refuse("origin", origin, "must be the only allowed origin");
            }
            if (credentials_) {
                refuse("origin", origin,
                       "cannot go with allow_credentials (browsers refuse it): list the origins");
            }
            any_origin_ = true;
            continue;
        }
        // "null" is the origin of sandboxed frames, file: pages and some redirects; any page
        // can make one, so a list allows it only when it names it. "*" does cover it: "*"
        // goes without credentials and answers every origin alike, as browsers read it.
        if (!iequals(origin, "null")) {
            const std::string_view fault = origin_fault(origin);
            if (!fault.empty()) refuse("allowed origin", origin, fault);
        }
        origins_.push_back(origin);
    }

    for (const auto& method : config.allowed_methods) {
        // "*" is a token, but tern does not treat it as "any method": refuse it rather than
        // allow a method literally named "*".
        if (!is_token(method) || method == "*") {
            refuse("allowed method", method, "is not a method name (an RFC 9110 token)");
        }
        methods_.push_back(method);
    }

    for (const auto& name : config.allowed_headers) {
        if (name == "*") {
            if (config.allowed_headers.size() != 1) {
                refuse("allowed header", name, "must be the only allowed header");
            }
            any_header_ = true;
            continue;
        }
        if (!is_token(name)) {
            refuse("allowed header", name, "is not a header name (an RFC 9110 token)");
        }
        headers_.push_back(name);
    }

    for (const auto& name : config.exposed_headers) {
        if (!is_token(name)) {
            refuse("exposed header", name, "is not a header name (an RFC 9110 token)");
        }
        // With credentials, browsers read "*" as a header literally named "*" (Fetch,
        // Access-Control-Expose-Headers), so it would expose nothing.
        if (name == "*" && credentials_) {
            refuse("exposed header", name, "means nothing with allow_credentials: list the names");
        }
        if (!exposed_.empty()) exposed_.append(", ");
        exposed_.append(name);
    }

    if (config.max_age.count() < 0) {
        throw std::invalid_argument("cors: max_age is negative");
    }
    if (config.max_age.count() > 0) max_age_ = std::to_string(config.max_age.count());
}

bool cors_policy::is_preflight(const request& req) noexcept {
    return req.method == "OPTIONS" && req.header("Origin").has_value() &&
           req.header("Access-Control-Request-Method").has_value();
}

void cors_policy::answer_preflight(const request& req, response& res) const {
    // Preflight answers depend on all three request fields (Fetch, "CORS protocol and HTTP
    // caches").
    add_vary(res, "Origin");
    add_vary(res, "Access-Control-Request-Method");
    add_vary(res, "Access-Control-Request-Headers");

    const std::string_view origin = req.header("Origin").value_or("");
    const std::string_view method = req.header("Access-Control-Request-Method").value_or("");
    bool allowed = origin_allowed(any_origin_, origins_, origin) &&
                   (is_simple_method(method) ||
                    std::find(methods_.begin(), methods_.end(), method) != methods_.end());

    // Access-Control-Request-Headers may be split over several fields (RFC 9110 5.3).
    std::string requested;
    const std::span<const header_field> fields(req.headers);
    for_each_member(fields, "Access-Control-Request-Headers", [&](std::string_view name) {
        if (!is_token(name) || (!any_header_ && !contains_ci(headers_, name))) allowed = false;
        if (!requested.empty()) requested.append(", ");
        requested.append(name);
    });

    if (!allowed) {
        res.status = 403;
        res.content_type = "text/plain; charset=utf-8";
        res.body = "CORS preflight refused";
        return;
    }

    res.status = 204;
    res.fields.emplace_back("Access-Control-Allow-Origin",
                            any_origin_ ? std::string("*") : std::string(origin));
    if (credentials_) res.fields.emplace_back("Access-Control-Allow-Credentials", "true");
    res.fields.emplace_back("Access-Control-Allow-Methods", std::string(method));
    if (!requested.empty()) res.fields.emplace_back("Access-Control-Allow-Headers", requested);
    if (!max_age_.empty()) res.fields.emplace_back("Access-Control-Max-Age", max_age_);
}

void cors_policy::decorate(const request& req, response& res) const {
    // A handler that answered CORS itself keeps its answer, as a handler's Content-Encoding
    // is kept: a second Access-Control-Allow-Origin makes browsers refuse the response
    // (Fetch, "CORS check": the field must hold one value).
    const bool handler_answered = std::any_of(
        res.fields.begin(), res.fields.end(),
        [](const auto& field) { return iequals(field.first, "Access-Control-Allow-Origin"); });
    if (any_origin_) {
        if (handler_answered) return;
        // Fetch, "CORS protocol and HTTP caches": a static Access-Control-Allow-Origin is sent
        // on every response, with or without Origin, and without Vary, so that a cached copy
        // of a same-origin response also serves cross-origin readers.
        res.fields.emplace_back("Access-Control-Allow-Origin", "*");
        if (!exposed_.empty()) res.fields.emplace_back("Access-Control-Expose-Headers", exposed_);
        return;
    }
    // The answer depends on Origin, so every response says so, even one to a request without
    // Origin: a cache must not hand it to a cross-origin reader (same section).
    add_vary(res, "Origin");
    const auto origin = req.header("Origin");
    if (handler_answered || !origin || !origin_allowed(any_origin_, origins_, *origin)) return;
    res.fields.emplace_back("Access-Control-Allow-Origin", std::string(*origin));
    if (credentials_) res.fields.emplace_back("Access-Control-Allow-Credentials", "true");
    if (!exposed_.empty()) res.fields.emplace_back("Access-Control-Expose-Headers", exposed_);
}

}  // namespace tern::detail

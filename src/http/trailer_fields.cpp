#include "http/trailer_fields.hpp"

#include "http/token.hpp"

#include <array>

namespace tern::detail {

namespace {

using namespace std::string_view_literals;

// RFC 9110 6.5.1: a sender must not put in a trailer section the fields a recipient needs
// before the content (message framing, routing, request modifiers such as controls and
// conditionals, authentication, response control data, how to process the content); and
// RFC 9113 8.2.2 / RFC 9114 4.2 forbid connection-specific fields anywhere. Content-* is
// refused as a prefix below.
constexpr std::array forbidden = {
    "age"sv,
    "authorization"sv,
    "cache-control"sv,
    "connection"sv,
    "cookie"sv,
    "date"sv,
    "expect"sv,
    "expires"sv,
    "host"sv,
    "if-match"sv,
    "if-modified-since"sv,
    "if-none-match"sv,
    "if-range"sv,
    "if-unmodified-since"sv,
    "keep-alive"sv,
    "location"sv,
    "max-forwards"sv,
    "pragma"sv,
    "proxy-authenticate"sv,
    "proxy-authentication-info"sv,
    "proxy-authorization"sv,
    "proxy-connection"sv,
    "range"sv,
    "retry-after"sv,
    "set-cookie"sv,
    "te"sv,
    "trailer"sv,
    "transfer-encoding"sv,
    "upgrade"sv,
    "vary"sv,
    "www-authenticate"sv,
    "authentication-info"sv,
};

bool iprefix(std::string_view s, std::string_view prefix) noexcept {
    return s.size() >= prefix.size() && iequals(s.substr(0, prefix.size()), prefix);
}

}  // namespace

const char* trailer_refusal(std::string_view name, std::string_view value) noexcept {
    if (!is_token(name)) return "is not a field name";
    if (has_control(value)) return "has a control character in its value";
    if (iprefix(name, "content-"sv)) return "describes the content: it cannot be a trailer";
    for (const auto f : forbidden) {
        if (iequals(name, f)) return "cannot be a trailer field (RFC 9110 6.5.1)";
    }
    return nullptr;
}

void set_trailer(trailer_list& list, std::string_view name, std::string_view value) {
    std::string lower(name);
    for (char& c : lower) c = ascii_lower(c);
    for (auto& [n, v] : list) {
        if (n == lower) {
            v.assign(value);
            return;
        }
    }
    list.emplace_back(std::move(lower), std::string(value));
}

void merge_trailers(trailer_list& into, const trailer_list& from) {
    for (const auto& [name, value] : from) set_trailer(into, name, value);
}

}  // namespace tern::detail

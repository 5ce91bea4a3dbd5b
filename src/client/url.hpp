#pragma once
// An absolute http(s) URL taken apart for a request, and a redirect's Location resolved
// against it. Transport-free.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace tern::detail {

/// Where connections go: kept alive and reused per origin.
struct origin {
    bool https = false;
    std::string host;  ///< a name, an IPv4 address, or an IPv6 address without brackets
    std::uint16_t port = 80;
    /// "https://host:port", the pool's key.
    std::string key() const;
    /// The Host field's value: the port only when it is not the scheme's.
    std::string authority() const;
};

struct url_parts {
    origin where;
    std::string target;  ///< path and query, at least "/"; never a fragment
};

/// `http://host[:port][/path][?query][#fragment]` (scheme and host case-insensitive,
/// `[v6]` for IPv6); nullopt when it is not such a URL: no scheme or host, another scheme,
/// a port out of range, userinfo, spaces or control bytes.
std::optional<url_parts> parse_url(std::string_view url);

/// A Location (absolute, scheme-relative `//host/...`, absolute-path or relative path)
/// against the URL it came from; nullopt when it cannot be followed.
std::optional<url_parts> resolve_location(const url_parts& base, std::string_view location);

}  // namespace tern::detail

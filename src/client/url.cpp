#include "client/url.hpp"

#include "http/request.hpp"
#include "http/token.hpp"

#include <charconv>

namespace tern::detail {

namespace {

bool clean(std::string_view s) noexcept {
    for (const char c : s) {
        const auto u = static_cast<unsigned char>(c);
        if (u <= 0x20 || u == 0x7f) return false;
    }
    return true;
}

std::string lower(std::string_view s) {
    std::string out(s);
    for (char& c : out) {
        if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    }
    return out;
}

// "host", "host:port", "[v6]", "[v6]:port" into `o` (the port keeps the scheme's default).
bool parse_authority(std::string_view a, origin& o) {
    if (a.empty() || a.find('@') != std::string_view::npos) return false;
    std::string_view host;
    std::string_view port;
    if (a.front() == '[') {
        const auto close = a.find(']');
        if (close == std::string_view::npos || close == 1) return false;
        host = a.substr(1, close - 1);
        const auto rest = a.substr(close + 1);
        if (!rest.empty()) {
            if (rest.front() != ':') return false;
            port = rest.substr(1);
        }
    } else {
        const auto colon = a.rfind(':');
        host = a.substr(0, colon);
        if (colon != std::string_view::npos) port = a.substr(colon + 1);
        if (host.find(':') != std::string_view::npos) return false;  // v6 without brackets
    }
    if (host.empty()) return false;
    if (!port.empty()) {
        unsigned value = 0;
        const auto r = std::from_chars(port.data(), port.data() + port.size(), value);
        if (r.ec != std::errc{} || r.ptr != port.data() + port.size() || value == 0 ||
            value > 65535) {
            return false;
        }
        o.port = static_cast<std::uint16_t>(value);
    }
    o.host = lower(host);
    return true;
}

}  // namespace

std::string origin::key() const { return (https ? "https://" : "http://") + authority(); }

std::string origin::authority() const {
    const bool v6 = host.find(':') != std::string::npos;
    std::string a = v6 ? "[" + host + "]" : host;
    if (port != (https ? 443 : 80)) a += ":" + std::to_string(port);
    return a;
}

std::optional<url_parts> parse_url(std::string_view url) {
    if (!clean(url)) return std::nullopt;
    const auto scheme_end = url.find("://");
    if (scheme_end == std::string_view::npos) return std::nullopt;
    url_parts u;
    const auto scheme = url.substr(0, scheme_end);
    if (iequals(scheme, "https")) {
        u.where.https = true;
        u.where.port = 443;
    } else if (!iequals(scheme, "http")) {
        return std::nullopt;
    }
    auto rest = url.substr(scheme_end + 3);
    if (const auto hash = rest.find('#'); hash != std::string_view::npos) {
        rest = rest.substr(0, hash);
    }
    const auto path_at = rest.find_first_of("/?");
    if (!parse_authority(rest.substr(0, path_at), u.where)) return std::nullopt;
    u.target = path_at == std::string_view::npos ? "/" : std::string(rest.substr(path_at));
    if (u.target.front() == '?') u.target.insert(0, "/");
    return u;
}

std::optional<url_parts> resolve_location(const url_parts& base, std::string_view location) {
    if (location.find("://") != std::string_view::npos) return parse_url(location);
    if (!clean(location) || location.empty()) return std::nullopt;
    if (location.substr(0, 2) == "//") {
        return parse_url((base.where.https ? "https:" : "http:") + std::string(location));
    }
    url_parts u = base;
    if (const auto hash = location.find('#'); hash != std::string_view::npos) {
        location = location.substr(0, hash);
    }
    if (location.front() == '/') {
        u.target = std::string(location);
        return u;
    }
    // A relative path replaces the base's last segment (RFC 3986 5.2.3; dot segments are
    // left for the server).
    auto dir = std::string_view(base.target).substr(0, base.target.find('?'));
    dir = dir.substr(0, dir.rfind('/') + 1);
    u.target = std::string(dir) + std::string(location);
    return u;
}

}  // namespace tern::detail

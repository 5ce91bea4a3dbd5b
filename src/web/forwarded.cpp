#include "web/forwarded.hpp"

#include "http/header_values.hpp"
#include "http/request.hpp"
#include "http/token.hpp"

#include "platform/socket_api.hpp"

#include <algorithm>
#include <stdexcept>

namespace tern::detail {

namespace {

constexpr std::array<std::uint8_t, 12> v4_mapped_prefix = {0, 0, 0, 0, 0,    0,
                                                           0, 0, 0, 0, 0xff, 0xff};

std::string_view trim(std::string_view s) noexcept {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
    return s;
}

// RFC 7239 6: node-port = port / obfport; port = 1*5DIGIT; obfport = "_" 1*(ALPHA / DIGIT /
// "." / "_" / "-").
bool valid_port(std::string_view p) noexcept {
    if (p.empty()) return false;
    if (p.front() == '_') {
        if (p.size() == 1) return false;
        return std::all_of(p.begin() + 1, p.end(), [](char c) {
            return is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '.' ||
                   c == '_' || c == '-';
        });
    }
    if (p.size() > 5 || !std::all_of(p.begin(), p.end(), is_digit)) return false;
    unsigned value = 0;
    for (const char c : p) value = value * 10 + static_cast<unsigned>(c - '0');
    return value <= 65535;
}

// "[v6]" or "[v6]:port".
std::optional<ip_address> parse_bracketed(std::string_view s) noexcept {
    const auto close = s.find(']');
    if (close == std::string_view::npos) return std::nullopt;
    auto a = parse_ip(s.substr(1, close - 1));
    if (!a || !a->v6) return std::nullopt;
    const auto rest = s.substr(close + 1);
    if (!rest.empty() && (rest.front() != ':' || !valid_port(rest.substr(1)))) return std::nullopt;
    return a;
}

// "a.b.c.d" or "a.b.c.d:port".
std::optional<ip_address> parse_v4_with_port(std::string_view s) noexcept {
    const auto colon = s.find(':');
    if (colon != std::string_view::npos && !valid_port(s.substr(colon + 1))) return std::nullopt;
    auto a = parse_ip(s.substr(0, colon));
    if (!a || a->v6) return std::nullopt;
    return a;
}

// A Forwarded `for=` node (RFC 7239 6), unquoted: an IPv4 address or a bracketed IPv6
// address, each with an optional port. "unknown" and obfuscated identifiers name no address.
std::optional<ip_address> parse_forwarded_node(std::string_view s) noexcept {
    if (!s.empty() && s.front() == '[') return parse_bracketed(s);
    return parse_v4_with_port(s);
}

// An X-Forwarded-For entry: a bare address of either family, or one with a port as proxies
// sometimes write it ("[v6]:port", "v4:port").
std::optional<ip_address> parse_xff_node(std::string_view s) noexcept {
    if (!s.empty() && s.front() == '[') return parse_bracketed(s);
    if (auto a = parse_ip(s)) return a;
    return parse_v4_with_port(s);
}

// Splits `s` at `sep` outside quoted strings (backslash escapes inside them), calling
// fn(piece) for each, left to right.
template <class Fn>
void split_outside_quotes(std::string_view s, char sep, Fn&& fn) {
    bool quoted = false;
    std::size_t start = 0;
    for (std::size_t i = 0; i < s.size(); ++i) {
        const char c = s[i];
        if (quoted) {
            if (c == '\\') {
                ++i;
            } else if (c == '"') {
                quoted = false;
            }
        } else if (c == '"') {
            quoted = true;
        } else if (c == sep) {
            fn(s.substr(start, i - start));
            start = i + 1;
        }
    }
    fn(s.substr(start));
}

// The `for=` value of one Forwarded element, unquoted; std::nullopt when it has none or
// it is malformed (an unterminated quote).
std::optional<std::string> forwarded_for(std::string_view element) {
    std::optional<std::string> found;
    split_outside_quotes(element, ';', [&](std::string_view pair) {
        pair = trim(pair);
        const auto eq = pair.find('=');
        if (found || eq == std::string_view::npos || !iequals(trim(pair.substr(0, eq)), "for")) {
            return;
        }
        auto value = trim(pair.substr(eq + 1));
        std::string out;
        if (!value.empty() && value.front() == '"') {
            if (value.size() < 2 || value.back() != '"') return;
            value = value.substr(1, value.size() - 2);
            for (std::size_t i = 0; i < value.size(); ++i) {
                if (value[i] == '\\' && i + 1 < value.size()) ++i;
                out.push_back(value[i]);
            }
        } else {
            out.assign(value);
        }
        found = std::move(out);
    });
    return found;
}

// Every value of the fields named `name`, joined with ',' in order (RFC 9110 5.3).
std::string joined(std::span<const header_field> headers, std::string_view name) {
    std::string all;
    bool any = false;
    for (const auto& h : headers) {
        if (!iequals(h.name, name)) continue;
        if (any) all.push_back(',');
        all.append(h.value);
        any = true;
    }
    return all;
}

}  // namespace

std::optional<ip_address> parse_ip(std::string_view text) noexcept {
    char buf[INET6_ADDRSTRLEN + 1];
    if (text.empty() || text.size() >= sizeof buf) return std::nullopt;
    std::copy(text.begin(), text.end(), buf);
    buf[text.size()] = '\0';
    ip_address a;
    if (::inet_pton(AF_INET, buf, a.bytes.data()) == 1) return a;
    if (::inet_pton(AF_INET6, buf, a.bytes.data()) != 1) return std::nullopt;
    if (std::equal(v4_mapped_prefix.begin(), v4_mapped_prefix.end(), a.bytes.begin())) {
        std::copy(a.bytes.begin() + 12, a.bytes.end(), a.bytes.begin());
        std::fill(a.bytes.begin() + 4, a.bytes.end(), std::uint8_t{0});
        return a;
    }
    a.v6 = true;
    return a;
}

std::string to_string(const ip_address& a) {
    char buf[INET6_ADDRSTRLEN];
    if (::inet_ntop(a.v6 ? AF_INET6 : AF_INET, a.bytes.data(), buf, sizeof buf) == nullptr) {
        return {};
    }
    return buf;
}

proxy_list::proxy_list(const std::vector<std::string>& entries, forwarding_header header)
    : header_(header) {
    for (const auto& entry : entries) {
        const std::string_view e = entry;
        if (e == "unix") {  // a proxy on the same host, over a Unix domain socket
            unix_peers_ = true;
            continue;
        }
        const auto slash = e.find('/');
        auto base = parse_ip(e.substr(0, slash));
        if (!base) {
            throw std::invalid_argument("tern: trusted proxy '" + entry +
                                        "' is not an IP address or a CIDR range");
        }
        const unsigned width = base->v6 ? 128 : 32;
        unsigned bits = width;
        if (slash != std::string_view::npos) {
            const auto digits = e.substr(slash + 1);
            if (digits.empty() || digits.size() > 3 ||
                !std::all_of(digits.begin(), digits.end(), is_digit) ||
                std::stoul(std::string(digits)) > width) {
                throw std::invalid_argument("tern: trusted proxy '" + entry +
                                            "' has a prefix length that is not 0.." +
                                            std::to_string(width));
            }
            bits = static_cast<unsigned>(std::stoul(std::string(digits)));
        }
        for (unsigned bit = bits; bit < width; ++bit) {
            if ((base->bytes[bit / 8] & (0x80U >> (bit % 8))) != 0) {
                throw std::invalid_argument("tern: trusted proxy '" + entry +
                                            "' has bits set after its prefix length (write the "
                                            "network address, e.g. 10.0.0.0/8)");
            }
        }
        ranges_.push_back({*base, bits});
    }
}

bool proxy_list::trusts(const ip_address& a) const noexcept {
    for (const auto& r : ranges_) {
        if (r.base.v6 != a.v6) continue;
        const unsigned whole = r.bits / 8;
        if (!std::equal(r.base.bytes.begin(), r.base.bytes.begin() + whole, a.bytes.begin())) {
            continue;
        }
        const unsigned rest = r.bits % 8;
        if (rest != 0) {
            const auto mask = static_cast<std::uint8_t>(0xFFU << (8 - rest));
            if ((r.base.bytes[whole] & mask) != (a.bytes[whole] & mask)) continue;
        }
        return true;
    }
    return false;
}

std::string resolve_client_ip(const proxy_list& proxies, std::string_view peer,
                              std::span<const header_field> headers) {
    // A Unix domain socket's peer ("unix", app::start_unix) has no address; "unix" in the
    // list trusts it.
    const bool unix_peer = peer == "unix";
    const auto from = unix_peer ? std::nullopt : parse_ip(peer);
    if (unix_peer ? !proxies.trusts_unix_peers() : !from || !proxies.trusts(*from)) return {};
    // Each hop appends the address it received from at the right: only the entries the
    // trusted proxies appended are believed, so the walk goes right to left and stops at
    // the first address no trusted proxy stands for. Whatever the client wrote itself
    // (the leftmost entries) is never reached while an untrusted hop is in between.
    // Only the header the proxies write: nginx's `proxy_add_x_forwarded_for`, for one,
    // appends to X-Forwarded-For and passes a client's `Forwarded: for=6.6.6.6` as it came.
    std::vector<std::optional<ip_address>> hops;
    if (proxies.header() == forwarding_header::forwarded) {
        if (!has_field(headers, "forwarded")) return {};
        const auto all = joined(headers, "forwarded");
        split_outside_quotes(all, ',', [&](std::string_view element) {
            const auto node = forwarded_for(element);
            hops.push_back(node ? parse_forwarded_node(*node) : std::nullopt);
        });
    } else {
        if (!has_field(headers, "x-forwarded-for")) return {};
        const auto all = joined(headers, "x-forwarded-for");
        split_outside_quotes(
            all, ',', [&](std::string_view entry) { hops.push_back(parse_xff_node(trim(entry))); });
    }
    std::optional<ip_address> current = from;
    for (auto it = hops.rbegin(); it != hops.rend(); ++it) {
        if (!*it) break;  // not an address: the last one reached answers
        current = *it;
        if (!proxies.trusts(*current)) break;
    }
    return current ? to_string(*current) : std::string();
}

}  // namespace tern::detail

// PROXY protocol v1 ("PROXY TCP4 src dst sport dport\r\n", at most 107 bytes) and v2 (a
// 12-byte signature, version/command, family/transport, a 16-bit length, then addresses
// and TLVs), as specified in HAProxy's proxy-protocol.txt.
#include "http/proxy_header.hpp"

#include "platform/socket_api.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <vector>

namespace tern::detail {

namespace {

constexpr std::string_view v1_prefix = "PROXY ";
constexpr std::size_t v1_max = 107;
constexpr std::array<unsigned char, 12> v2_signature = {0x0D, 0x0A, 0x0D, 0x0A, 0x00, 0x0D,
                                                        0x0A, 0x51, 0x55, 0x49, 0x54, 0x0A};
constexpr std::size_t v2_preamble = 16;

proxy_header invalid() {
    proxy_header h;
    h.result = proxy_header::state::invalid;
    return h;
}

proxy_header need(std::size_t n) {
    proxy_header h;
    h.needed = n;
    return h;
}

std::vector<std::string_view> split_spaces(std::string_view s) {
    std::vector<std::string_view> parts;
    while (!s.empty()) {
        const auto space = s.find(' ');
        parts.push_back(s.substr(0, space));
        if (space == std::string_view::npos) break;
        s.remove_prefix(space + 1);
    }
    return parts;
}

bool is_port(std::string_view s) {
    unsigned value = 0;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
    // Decimal, no leading zero (the spec's form), 0..65535.
    return ec == std::errc{} && end == s.data() + s.size() && value <= 65535 &&
           (s.size() == 1 || s[0] != '0');
}

// The address in canonical text form, or empty when `text` is not one of `family`.
std::string canonical(int family, std::string_view text) {
    if (text.size() >= INET6_ADDRSTRLEN) return {};
    // Printable characters only: inet_pton reads up to a NUL, so "6.6.6.6\0" would pass.
    if (std::any_of(text.begin(), text.end(), [](char c) { return c <= ' ' || c > '~'; })) {
        return {};
    }
    char in[INET6_ADDRSTRLEN] = {};
    std::memcpy(in, text.data(), text.size());
    unsigned char raw[16];
    if (::inet_pton(family, in, raw) != 1) return {};
    char out[INET6_ADDRSTRLEN];
    if (::inet_ntop(family, raw, out, sizeof out) == nullptr) return {};
    return out;
}

proxy_header parse_v1(std::string_view bytes) {
    const auto end = bytes.find("\r\n");
    if (end == std::string_view::npos) {
        if (bytes.size() >= v1_max) return invalid();
        // No CR LF yet: all of it is header, and at most v1_max bytes can be.
        return need(v1_max - bytes.size());
    }
    if (end + 2 > v1_max) return invalid();
    const auto parts = split_spaces(bytes.substr(v1_prefix.size(), end - v1_prefix.size()));
    proxy_header h;
    h.result = proxy_header::state::done;
    h.size = end + 2;
    if (!parts.empty() && parts[0] == "UNKNOWN") return h;  // the rest is to be ignored
    if (parts.size() != 5) return invalid();
    const int family = parts[0] == "TCP4" ? AF_INET : parts[0] == "TCP6" ? AF_INET6 : -1;
    if (family < 0 || !is_port(parts[3]) || !is_port(parts[4])) return invalid();
    h.source = canonical(family, parts[1]);
    if (h.source.empty() || canonical(family, parts[2]).empty()) return invalid();
    return h;
}

proxy_header parse_v2(std::string_view bytes) {
    if (bytes.size() < v2_preamble) return need(v2_preamble - bytes.size());
    const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(bytes[i]); };
    const unsigned version = byte(12) >> 4;
    const unsigned command = byte(12) & 0x0F;
    const std::size_t length = (std::size_t{byte(14)} << 8) | byte(15);
    if (version != 2 || command > 1 || v2_preamble + length > max_proxy_header) {
        return invalid();
    }
    if (bytes.size() < v2_preamble + length) return need(v2_preamble + length - bytes.size());
    proxy_header h;
    h.result = proxy_header::state::done;
    h.size = v2_preamble + length;
    if (command == 0) return h;  // LOCAL: the balancer's own connection (a health check)
    const unsigned family = byte(13) >> 4;
    const unsigned transport = byte(13) & 0x0F;
    const char* addresses = bytes.data() + v2_preamble;
    char text[INET6_ADDRSTRLEN];
    if (family == 1 && transport == 1) {  // TCP over IPv4: src, dst, sport, dport
        if (length < 12) return invalid();
        if (::inet_ntop(AF_INET, addresses, text, sizeof text) == nullptr) return invalid();
        h.source = text;
    } else if (family == 2 && transport == 1) {  // TCP over IPv6
        if (length < 36) return invalid();
        if (::inet_ntop(AF_INET6, addresses, text, sizeof text) == nullptr) return invalid();
        h.source = text;
    } else if (family != 0) {
        // UDP or a Unix socket: this server speaks TCP; say so rather than guess.
        return invalid();
    }
    return h;  // UNSPEC: keep the peer's address
}

}  // namespace

proxy_header parse_proxy_header(std::string_view bytes) {
    if (bytes.empty()) return need(1);
    if (bytes[0] == 'P') {
        const auto n = std::min(bytes.size(), v1_prefix.size());
        if (bytes.substr(0, n) != v1_prefix.substr(0, n)) return invalid();
        if (bytes.size() < v1_prefix.size()) return need(v1_prefix.size() - bytes.size());
        return parse_v1(bytes);
    }
    const auto n = std::min(bytes.size(), v2_signature.size());
    if (std::memcmp(bytes.data(), v2_signature.data(), n) != 0) return invalid();
    if (bytes.size() < v2_signature.size()) return need(v2_signature.size() - bytes.size());
    return parse_v2(bytes);
}

}  // namespace tern::detail

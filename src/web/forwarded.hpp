#pragma once
// The client's address behind reverse proxies: trusted proxy addresses and ranges, and the
// walk over `Forwarded` (RFC 7239) or `X-Forwarded-For` from right to left. Transport-free:
// the peer's address and the header fields in, an address out (docs/proxies.md).

#include <tern/header_field.hpp>

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace tern::detail {

/// An IPv4 or IPv6 address. An IPv4-mapped IPv6 address (::ffff:a.b.c.d) is held as IPv4,
/// so a dual-stack socket's peers match IPv4 entries.
struct ip_address {
    bool v6 = false;
    std::array<std::uint8_t, 16> bytes{};  ///< the first 4 for IPv4
};

/// Parses a bare address ("10.0.0.1", "2001:db8::1"); std::nullopt for anything else.
std::optional<ip_address> parse_ip(std::string_view text) noexcept;
/// The address in its canonical text form ("2001:db8::1", "10.0.0.1").
std::string to_string(const ip_address& a);

/// The header the trusted proxies write: only it is read; the other is the client's own.
enum class forwarding_header { x_forwarded_for, forwarded };

/// The proxies whose forwarding header is believed: addresses and CIDR ranges, and which
/// header they write.
class proxy_list {
public:
    /// Parses each entry: an address ("127.0.0.1", "::1"), a range ("10.0.0.0/8",
    /// "fd00::/8"), or "unix" (peers on a Unix domain socket). Throws std::invalid_argument naming
    /// the first bad entry (not an address, a prefix length out of range, host bits set under the
    /// prefix).
    explicit proxy_list(const std::vector<std::string>& entries,
                        forwarding_header header = forwarding_header::x_forwarded_for);
    /// Whether `a` is one of the entries or inside one of the ranges.
    bool trusts(const ip_address& a) const noexcept;
    /// Whether the entry "unix" was given: peers on a Unix domain socket are trusted.
    bool trusts_unix_peers() const noexcept { return unix_peers_; }
    /// The header the proxies write.
    forwarding_header header() const noexcept { return header_; }

private:
    struct range {
        ip_address base;
        unsigned bits = 0;
    };
    std::vector<range> ranges_;
    bool unix_peers_ = false;
    forwarding_header header_;
};

/// The client's address for a request that came from `peer` with `headers`, or an empty
/// string when it is the peer itself: the peer is not trusted, or it sent none of the
/// header the proxies write. Otherwise the hops of every field of that header (joined in
/// order; `Forwarded`'s `for=` parameters, or `X-Forwarded-For`'s entries) are read from
/// right to left; the other header is never read, since a proxy passes a client's own
/// copy of it through untouched: trusted addresses are skipped, the first untrusted one is the
/// client. An entry that is not an address (garbage, "unknown", an obfuscated identifier, a
/// Forwarded element without `for=`) ends the walk: the last address reached (a trusted proxy) is
/// the answer. When every hop is trusted, the leftmost is the answer.
std::string resolve_client_ip(const proxy_list& proxies, std::string_view peer,
                              std::span<const header_field> headers);

}  // namespace tern::detail

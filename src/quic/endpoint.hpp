#pragma once
// The transport-free QUIC server core's front door (docs/http3.md): a datagram in (bytes,
// local and remote address), datagrams out. It answers what needs no connection state:
// Version Negotiation for an unknown version, a Retry (with an address-bound token) for an
// Initial without a valid token, a stateless reset for a short-header packet whose
// connection ID it does not know; everything else that does not parse is dropped. The only
// user of ngtcp2 (with src/quic's other files); no sockets, no clock of its own.

#include "quic/address.hpp"

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace tern::detail::quic {

/// What `endpoint::receive` did with one datagram (for tests and counters).
enum class verdict {
    dropped,              ///< unparseable, too short to answer, or not worth an answer
    version_negotiation,  ///< a long header with a version other than QUIC v1
    retry,                ///< an Initial without a token: a Retry with one was sent
    bad_token,            ///< an Initial whose token does not verify: dropped
    stateless_reset,      ///< a short header for an unknown connection ID
    accepted,             ///< an Initial with a valid token: a new connection may start
    over_capacity,        ///< such an Initial while the server holds its maximum: dropped
    to_connection,        ///< for a connection ID the endpoint knows
    elsewhere,            ///< for a connection ID another node issued: `elsewhere()` says which
};

/// The secret Retry tokens and stateless reset tokens are made with (RFC 9000, 8.1.4 and
/// 10.3.2): one for all the nodes of a server, so that any of them verifies what another made.
using endpoint_secret = std::array<std::uint8_t, 32>;

/// The endpoint's settings.
struct endpoint_settings {
    /// How long a Retry token stays valid.
    std::chrono::nanoseconds retry_token_lifetime = std::chrono::seconds(10);
    /// The length of the connection IDs the server picks (short headers carry no length).
    std::size_t cid_length = 18;
    /// This endpoint's place among `nodes` endpoints on one UDP port (a worker each, the
    /// kernel spreading peers over their sockets by address). With more than one, the first
    /// byte of every connection ID it issues is `node`, so that a datagram reaching another
    /// node (its peer's address changed) can be sent on to the one holding its connection.
    std::uint8_t node = 0;
    std::uint8_t nodes = 1;
};

/// The stateless half of a QUIC server, over a secret given (shared by the nodes of one
/// server) or made at random at construction (tokens and reset tokens then do not survive
/// the endpoint).
class endpoint {
public:
    explicit endpoint(endpoint_settings settings = {}, const endpoint_secret* secret = nullptr);

    /// One datagram from `remote` to `local` at `now` (nanoseconds of a monotonic clock):
    /// appends what to send back to `out`.
    verdict receive(std::span<const std::uint8_t> bytes, const address& local,
                    const address& remote, std::uint64_t now, datagram_batch& out);

    /// The stateless reset token for a connection ID this server issued (RFC 9000, 10.3).
    std::array<std::uint8_t, 16> reset_token(std::span<const std::uint8_t> cid) const;
    /// A fresh random connection ID of `settings.cid_length` bytes.
    std::vector<std::uint8_t> new_cid() const;
    /// Whether `cid` belongs to a connection (consulted for short headers).
    bool knows(std::span<const std::uint8_t> cid) const;
    /// Connection IDs routed to a connection: added when it issues one, removed when it
    /// retires it or ends.
    void add_cid(std::span<const std::uint8_t> cid);
    void remove_cid(std::span<const std::uint8_t> cid);

    /// After `accepted`: the connection IDs of the Initial let in. `original` is the one the
    /// client first chose (before the Retry), `retry` the one the Retry gave it, `client` the
    /// client's own; `token` the Retry token it carried.
    struct accepted_ids {
        std::vector<std::uint8_t> original, retry, client, token;
        std::uint32_t version = 0;
    };
    const accepted_ids& last_accepted() const noexcept { return accepted_; }
    /// After `elsewhere`: the node that issued the datagram's connection ID.
    std::uint8_t elsewhere() const noexcept { return elsewhere_; }
    /// A random secret for `endpoint_secret` (GnuTLS's generator).
    static endpoint_secret random_secret();

private:
    verdict on_long(std::span<const std::uint8_t> bytes, const address& remote, std::uint64_t now,
                    datagram_batch& out);
    verdict on_short(std::span<const std::uint8_t> bytes, const address& remote,
                     datagram_batch& out);
    // The node that issued `cid` when that is not this one (then `elsewhere_` is set).
    bool issued_elsewhere(std::span<const std::uint8_t> cid) noexcept;

    endpoint_settings settings_;
    endpoint_secret secret_{};
    std::uint8_t elsewhere_ = 0;
    std::vector<std::string> cids_;  // few in this slice: a sorted vector
    accepted_ids accepted_;
};

}  // namespace tern::detail::quic

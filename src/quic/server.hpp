#pragma once
// The transport-free QUIC server core (docs/http3.md): the endpoint's stateless answers and
// a table of connection IDs to connections. Datagrams in (bytes, local and remote address),
// datagrams out, the nearest expiry and `on_expiry`. Single-threaded: one per event loop.

#include "quic/address.hpp"
#include "quic/connection.hpp"
#include "quic/endpoint.hpp"
#include "quic/stream_sink.hpp"
#include "quic/tls_credentials.hpp"

#include <atomic>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace tern::detail::quic {

/// What the servers on the sockets of one UDP port share, one server per worker
/// (docs/http3.md, "Workers"): the secret of their tokens, and the count of their
/// connections against `connection_settings::max_connections`.
struct server_group {
    endpoint_secret secret = endpoint::random_secret();
    std::atomic<std::size_t> connections{0};
    /// Of those, the ones whose handshake has not completed, against
    /// `connection_settings::max_handshakes`.
    std::atomic<std::size_t> handshakes{0};
};

/// A server's place in its group: node `node` of `nodes` (endpoint_settings), `group` shared
/// by all of them (null: a group of its own).
struct placement {
    std::uint8_t node = 0;
    std::uint8_t nodes = 1;
    std::shared_ptr<server_group> group;
};

class server {
public:
    /// Makes the stream sink of a connection whose handshake completed, given the
    /// connection's controls and its peer's address (none: stream data is consumed unread).
    using sink_maker =
        std::function<std::unique_ptr<stream_sink>(stream_control& control, const address& peer)>;

    /// Throws std::invalid_argument when the certificate or key cannot be loaded. `on_wake`
    /// is told (once until `write_woken`) that some connection's sink wants to send outside
    /// a call into the server: the caller calls `write_woken` soon, on the same thread.
    server(const std::string& cert_file, const std::string& key_file,
           connection_settings settings = {}, sink_maker make_sink = {},
           std::function<void()> on_wake = {}, placement where = {});
    ~server();
    server(const server&) = delete;
    server& operator=(const server&) = delete;

    /// One datagram at `now`: appends what to send to `out`. `elsewhere`: the datagram
    /// belongs to node `front().elsewhere()`, and nothing was done with it.
    verdict receive(std::span<const std::uint8_t> bytes, const address& local,
                    const address& remote, std::uint64_t now, datagram_batch& out);
    /// The nearest expiry of any connection (UINT64_MAX: none). Each connection's expiry is
    /// kept in an ordered set, updated after each call into it: O(1) here, O(log N) per
    /// datagram.
    std::uint64_t expiry() const noexcept;
    /// Handles every expiry due at `now`; appends what to send.
    void on_expiry(std::uint64_t now, datagram_batch& out);
    /// Closes every connection at once (the server stops) with the application's `code`,
    /// appending their CONNECTION_CLOSE datagrams to `out`.
    void close_all(std::uint64_t code, std::uint64_t now, datagram_batch& out);
    /// Writes every connection whose sink asked to send since the last call.
    void write_woken(std::uint64_t now, datagram_batch& out);
    /// Connections open.
    std::size_t connections() const noexcept { return held_.size(); }
    /// Of those, the ones whose handshake has not completed.
    std::size_t handshaking() const noexcept { return handshaking_; }
    /// Connections whose handshake completed (since the server was made).
    std::size_t handshakes() const noexcept { return handshakes_; }
    const endpoint& front() const noexcept { return endpoint_; }

private:
    static constexpr std::uint64_t never = std::numeric_limits<std::uint64_t>::max();
    // A connection and what the server keeps for it: the IDs it answers to (keys of
    // by_cid_), and its expiry as by_expiry_ holds it.
    struct held {
        std::unique_ptr<connection> owned;
        std::vector<std::string> cids;
        std::uint64_t expiry = never;
    };

    void end(connection* c);
    void after_io(connection* c, bool alive);
    void forget_cid(const std::string& key);
    // Puts `c`'s current expiry in by_expiry_ in place of the one it had.
    void schedule(connection* c, held& h);

    std::shared_ptr<server_group> group_;
    endpoint endpoint_;
    tls_credentials credentials_;
    connection_settings settings_;
    sink_maker make_sink_;
    std::function<void()> on_wake_;
    std::vector<connection*> woken_;
    std::unordered_map<connection*, held> held_;
    // Looked up by a view of the datagram's ID, so a lookup makes no string (an ID is 18
    // bytes, past std::string's inline capacity: one allocation per datagram before).
    struct cid_hash {
        using is_transparent = void;
        std::size_t operator()(std::string_view key) const noexcept {
            return std::hash<std::string_view>{}(key);
        }
    };
    std::unordered_map<std::string, connection*, cid_hash, std::equal_to<>> by_cid_;
    std::set<std::pair<std::uint64_t, connection*>> by_expiry_;
    std::vector<connection*> due_;  // on_expiry's scratch, kept between calls
    std::size_t handshakes_ = 0;
    std::size_t handshaking_ = 0;
};

}  // namespace tern::detail::quic

#pragma once
// One QUIC connection on the server (docs/http3.md): ngtcp2's connection and its GnuTLS
// session (ALPN h3, 0-RTT off), made for an Initial the endpoint let in. Datagrams in,
// datagrams out, the nearest expiry; stream data goes up through a stream_sink. Transport-
// free: no sockets, the caller's clock.

#include "quic/address.hpp"
#include "quic/endpoint.hpp"
#include "quic/stream_sink.hpp"
#include "quic/tls_credentials.hpp"

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <vector>

namespace tern::detail::quic {

/// A connection's settings.
struct connection_settings {
    std::chrono::nanoseconds idle_timeout = std::chrono::seconds(30);
    std::uint64_t max_streams_bidi = 100;
    std::uint64_t max_stream_data = 256 * 1024;
    std::uint64_t max_data = 1024 * 1024;
    /// Connections the server holds at most; an Initial past it is dropped (the client's
    /// handshake times out, or it retries).
    std::size_t max_connections = 10'000;
    /// Of those, connections whose handshake has not completed; an Initial past it is
    /// dropped the same way.
    std::size_t max_handshakes = 1'000;
    /// How long a handshake may take from the connection's first Initial; then the
    /// connection is dropped without a word (ngtcp2's handshake timeout).
    std::chrono::nanoseconds handshake_timeout = std::chrono::seconds(5);
};

class connection final : public stream_control {
public:
    /// Told when the connection issues or retires a connection ID (for the endpoint's table).
    using cid_fn =
        std::function<void(connection& c, std::span<const std::uint8_t> cid, bool added)>;
    /// Told when the sink wants to send outside the connection's own calls (want_write),
    /// once until the connection is next written (`write`).
    using wake_fn = std::function<void(connection& c)>;

    /// For the Initial `endpoint.last_accepted()` describes, from `remote` to `local`. Throws
    /// std::runtime_error when ngtcp2 or GnuTLS cannot make it.
    connection(endpoint& ep, const tls_credentials& credentials, const address& local,
               const address& remote, const connection_settings& settings, std::uint64_t now,
               cid_fn on_cid, wake_fn on_wake = {});
    ~connection();
    connection(const connection&) = delete;
    connection& operator=(const connection&) = delete;

    /// A datagram for this connection; appends what to send to `out`. False when the
    /// connection is over (the caller forgets it).
    bool receive(std::span<const std::uint8_t> bytes, const address& remote, std::uint64_t now,
                 datagram_batch& out);
    /// The time of the nearest expiry (a monotonic nanosecond count, as `now`).
    std::uint64_t expiry() const noexcept;
    /// That time has come: appends what to send. False when the connection is over.
    bool on_expiry(std::uint64_t now, datagram_batch& out);
    /// Whether the TLS handshake is complete.
    bool handshake_completed() const noexcept { return handshake_done_; }
    /// Closes the connection at once (the server stops): appends its CONNECTION_CLOSE with
    /// the application's `code` to `out`.
    void close(std::uint64_t code, std::uint64_t now, datagram_batch& out);
    /// Writes what the sink has to send (after want_write): appends it to `out`. False when
    /// the connection is over.
    bool write(std::uint64_t now, datagram_batch& out);
    /// Makes the sink that takes stream data and gives what to send, once the handshake
    /// completes (inside it: the first request may come in the same datagram). None: stream
    /// data is consumed unread.
    using sink_fn =
        std::function<std::unique_ptr<stream_sink>(stream_control& control, const address& peer)>;
    void set_sink_maker(sink_fn make) { make_sink_ = std::move(make); }
    /// The peer's address: the connection's current path (ngtcp2's), which changes only for
    /// a packet that decrypts, and is validated before more than 3x what came is sent.
    const address& remote() const noexcept { return remote_; }

    // stream_control
    std::int64_t open_uni_stream() override;
    void shutdown_write(std::int64_t id, std::uint64_t code) override;
    void shutdown_read(std::int64_t id, std::uint64_t code) override;
    void want_write() override;
    void release_stream(std::int64_t id) override;
    void hold_window(std::int64_t id, std::uint64_t n) override;
    void give_window(std::int64_t id, std::uint64_t n) override;
    /// Whether the completed handshake has been told to the server (once).
    bool announced() const noexcept { return announced_; }
    void announce() noexcept { announced_ = true; }
    /// The connection IDs it answers to (for the endpoint's table, at the end).
    std::vector<std::vector<std::uint8_t>> cids() const;

private:
    struct callbacks;
    bool read(std::span<const std::uint8_t> bytes, const address& remote, std::uint64_t now,
              datagram_batch& out);
    bool flush(std::uint64_t now, datagram_batch& out);
    // Takes ngtcp2's current path as the peer's address: true when it changed.
    bool follow_path();
    // Sends a CONNECTION_CLOSE for ngtcp2's `error`; false (the connection is over).
    bool fail(int error, std::uint64_t now, datagram_batch& out);
    void send_close(std::uint64_t now, datagram_batch& out);

    endpoint& endpoint_;
    cid_fn on_cid_;
    wake_fn on_wake_;
    std::uint64_t max_streams_bidi_;  // the first limit on the peer's request streams
    address local_, remote_;
    struct native;
    std::unique_ptr<native> native_;
    sink_fn make_sink_;
    std::unique_ptr<stream_sink> sink_;
    bool handshake_done_ = false;
    bool announced_ = false;
    bool busy_ = false;            // in receive, on_expiry or write: a flush follows anyway
    bool woken_ = false;           // on_wake_ told since the last flush
    bool validating_ = false;      // moved to a path ngtcp2 is validating (see expiry())
    std::uint64_t last_poll_ = 0;  // the last on_expiry's time
    // The peer's request streams closed, and the places the sink gave back for them.
    std::uint64_t closed_requests_ = 0;
    std::uint64_t released_requests_ = 0;
    // The stream whose data the sink is given now, and the bytes of it the sink holds back.
    std::int64_t receiving_ = -1;
    std::uint64_t held_back_ = 0;
};

}  // namespace tern::detail::quic

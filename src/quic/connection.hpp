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
};

class connection {
public:
    /// Told when the connection issues or retires a connection ID (for the endpoint's table).
    using cid_fn =
        std::function<void(connection& c, std::span<const std::uint8_t> cid, bool added)>;

    /// For the Initial `endpoint.last_accepted()` describes, from `remote` to `local`. Throws
    /// std::runtime_error when ngtcp2 or GnuTLS cannot make it.
    connection(endpoint& ep, const tls_credentials& credentials, const address& local,
               const address& remote, const connection_settings& settings, std::uint64_t now,
               cid_fn on_cid);
    ~connection();
    connection(const connection&) = delete;
    connection& operator=(const connection&) = delete;

    /// A datagram for this connection; appends what to send to `out`. False when the
    /// connection is over (the caller forgets it).
    bool receive(std::span<const std::uint8_t> bytes, const address& remote, std::uint64_t now,
                 std::vector<datagram>& out);
    /// The time of the nearest expiry (a monotonic nanosecond count, as `now`).
    std::uint64_t expiry() const noexcept;
    /// That time has come: appends what to send. False when the connection is over.
    bool on_expiry(std::uint64_t now, std::vector<datagram>& out);
    /// Whether the TLS handshake is complete.
    bool handshake_completed() const noexcept { return handshake_done_; }
    /// The sink that takes stream data from now on (none: stream data is consumed unread).
    void set_sink(std::unique_ptr<stream_sink> sink) { sink_ = std::move(sink); }
    /// Whether the completed handshake has been told to the server (once).
    bool announced() const noexcept { return announced_; }
    void announce() noexcept { announced_ = true; }
    /// The connection IDs it answers to (for the endpoint's table, at the end).
    std::vector<std::vector<std::uint8_t>> cids() const;

private:
    struct callbacks;
    bool flush(std::uint64_t now, std::vector<datagram>& out);

    endpoint& endpoint_;
    cid_fn on_cid_;
    address local_, remote_;
    struct native;
    std::unique_ptr<native> native_;
    std::unique_ptr<stream_sink> sink_;
    bool handshake_done_ = false;
    bool announced_ = false;
};

}  // namespace tern::detail::quic

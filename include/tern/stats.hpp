#pragma once
/// @file stats.hpp
/// Counters a running server keeps, for monitoring and for tests.

#include <cstddef>
#include <cstdint>

namespace tern {

/// A snapshot of a server's counters since `start()`, summed over its threads. Each thread
/// counts its own (no shared counter on the request path), so a snapshot taken under load
/// may be a few events behind.
struct server_stats {
    std::uint64_t connections_accepted = 0;  ///< accepted, including those refused below
    /// Refused over max_concurrent_connections (answered 503 on plain HTTP, closed at once on
    /// HTTPS) or over tls_config::max_handshakes (closed at once).
    std::uint64_t connections_refused = 0;
    std::uint64_t requests = 0;  ///< requests answered, including error answers
    std::uint64_t writes = 0;    ///< socket writes; responses to requests read together share one
    std::size_t open_connections = 0;  ///< connections open now
    std::uint64_t h2_connections = 0;  ///< connections that spoke HTTP/2 (h2 or h2c)
    std::uint64_t h2_requests = 0;     ///< of `requests`, those answered over HTTP/2
    std::uint64_t h3_connections = 0;  ///< QUIC connections that completed their handshake
    std::uint64_t h3_requests = 0;     ///< of `requests`, those answered over HTTP/3
    std::uint64_t tls_handshakes = 0;  ///< TLS handshakes completed
    /// TLS handshakes refused on a protocol error: an old version, no shared cipher or
    /// protocol, garbage instead of a ClientHello (logged on stderr, at most a line a
    /// second per thread). Clients that leave or time out mid-handshake are not counted.
    std::uint64_t tls_handshake_failures = 0;
    /// Bytes read from connections (HTTP/1.1, HTTP/2 and WebSocket bytes; under TLS, after
    /// decryption).
    std::uint64_t bytes_received = 0;
    /// Bytes written to connections (heads, bodies, files, frames; under TLS, before
    /// encryption).
    std::uint64_t bytes_sent = 0;
};

}  // namespace tern

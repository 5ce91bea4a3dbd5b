#pragma once
// The seam between the QUIC core (src/quic) and HTTP/3 (src/h3; docs/http3.md): what a QUIC
// connection tells the layer above of its streams. Interfaces only, no ngtcp2 or nghttp3
// types, so that each side is tested without the other. Loop thread only.

#include <cstddef>
#include <cstdint>
#include <span>

namespace tern::detail::quic {

/// Implemented by the layer above, one per connection (made when the handshake completes).
class stream_sink {
public:
    virtual ~stream_sink() = default;
    /// Bytes of stream `id` in order; `fin`: the peer's side of the stream ended with them.
    /// False: the connection cannot go on (it is closed with an application error).
    virtual bool on_stream_data(std::int64_t id, std::span<const std::uint8_t> bytes, bool fin) = 0;
    /// Stream `id` is closed (both sides, or reset).
    virtual void on_stream_close(std::int64_t id) = 0;
};

}  // namespace tern::detail::quic

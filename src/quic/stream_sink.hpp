#pragma once
// The seam between the QUIC core (src/quic) and HTTP/3 (src/h3; docs/http3.md): what a QUIC
// connection tells the layer above of its streams (stream_sink), and what the layer above may
// ask of its connection (stream_control). Interfaces only, no ngtcp2 or nghttp3 types, so
// that each side is tested without the other. Loop thread only.

#include <cstddef>
#include <cstdint>
#include <span>

namespace tern::detail::quic {

/// A run of bytes to send, laid out as ngtcp2_vec and nghttp3_vec are (each side casts).
struct stream_vec {
    std::uint8_t* base;
    std::size_t len;
};

/// Implemented by the QUIC connection, given to its sink when the sink is made.
class stream_control {
public:
    /// Opens a unidirectional stream of the server's (HTTP/3's control and QPACK streams);
    /// -1 when the peer allows none.
    virtual std::int64_t open_uni_stream() = 0;
    /// Ends stream `id`'s sending side abruptly (RESET_STREAM) with `code`.
    virtual void shutdown_write(std::int64_t id, std::uint64_t code) = 0;
    /// Asks the peer to stop sending on stream `id` (STOP_SENDING) with `code`.
    virtual void shutdown_read(std::int64_t id, std::uint64_t code) = 0;
    /// The sink has bytes to send outside a call from the connection (a response completed
    /// later, a streamed body's bytes): the connection is written soon.
    virtual void want_write() = 0;
    /// Request stream `id` (bidirectional, the peer's) is closed and the work the sink began
    /// for it has ended: the peer may open one more in its place (MAX_STREAMS), so a stream
    /// cancelled while its handler still works keeps its place until the work ends. Once per
    /// such stream, during or after on_stream_close; the connection gives back no more places
    /// than request streams have closed, whatever the sink says.
    virtual void release_stream(std::int64_t id) = 0;
    /// Inside stream_sink::on_stream_data for stream `id`: `n` of the bytes given are kept
    /// and their flow-control credit is held back (the peer's MAX_STREAM_DATA does not grow
    /// by them) until give_window; the connection's credit comes back whole.
    virtual void hold_window(std::int64_t id, std::uint64_t n) = 0;
    /// Gives the peer `n` bytes of credit held back on stream `id` (MAX_STREAM_DATA).
    virtual void give_window(std::int64_t id, std::uint64_t n) = 0;

protected:
    ~stream_control() = default;
};

/// Implemented by the layer above, one per connection (made when the handshake completes).
class stream_sink {
public:
    virtual ~stream_sink() = default;
    /// Bytes of stream `id` in order; `fin`: the peer's side of the stream ended with them.
    /// Their flow-control credit comes back at once, but for what the sink holds back
    /// (stream_control::hold_window). False: the connection cannot go on (it is closed with
    /// `failure()`'s application error code, or QUIC's INTERNAL_ERROR when that is 0).
    virtual bool on_stream_data(std::int64_t id, std::span<const std::uint8_t> bytes, bool fin) = 0;
    /// After a call returned false: the application error code to close the connection with
    /// (HTTP/3's, such as H3_FRAME_UNEXPECTED); 0: none.
    virtual std::uint64_t failure() const noexcept { return 0; }
    /// The peer reset stream `id` or asked it to stop sending (each may come, once). False:
    /// the connection cannot go on (closed with `failure()`'s code: HTTP/3's rapid-reset
    /// budget, H3_EXCESSIVE_LOAD).
    virtual bool on_stream_reset(std::int64_t id) = 0;
    /// Stream `id` is closed (both sides, or reset), with the application's error code. A
    /// request stream's place is given back by the sink (stream_control::release_stream).
    virtual void on_stream_close(std::int64_t id, std::uint64_t code) = 0;

    // ---- the way down: the connection pulls what to send as it fills packets ----------
    /// Fills `vecs` with the next bytes to send on one stream, sets `id` (-1: nothing to
    /// send) and `fin` (the last bytes of the stream); returns how many of `vecs` it filled
    /// (0 with `fin` and an id: only the stream's end). Negative: the connection fails.
    virtual long next_write(std::int64_t& id, bool& fin, std::span<stream_vec> vecs) = 0;
    /// The connection took `n` bytes of what `next_write` gave for `id` into packets.
    virtual bool on_written(std::int64_t id, std::size_t n) = 0;
    /// Stream `id` cannot take more now (its flow-control window is full).
    virtual void on_write_blocked(std::int64_t id) = 0;
    /// Stream `id`'s window opened again.
    virtual bool on_write_unblocked(std::int64_t id) = 0;
    /// Stream `id` can send nothing more (it was reset).
    virtual void on_write_shut(std::int64_t id) = 0;
    /// The peer acknowledged `n` more bytes of stream `id` (they may be let go).
    virtual bool on_acked(std::int64_t id, std::uint64_t n) = 0;
    /// The peer may now open bidirectional streams up to `max_bidi` in all (told once when
    /// the sink is made, then as closed streams make room).
    virtual void on_peer_stream_limit(std::uint64_t max_bidi) = 0;
};

}  // namespace tern::detail::quic

#pragma once
/// @file quic_client.hpp
/// A blocking, single-threaded QUIC client for HTTP/3 wire tests (tests/quic): ngtcp2's
/// client with its GnuTLS backend (ALPN h3, SNI "localhost", the server's certificate not
/// verified) over a POSIX UDP socket connected to 127.0.0.1. It sends what a test asks on the
/// streams it asks for and records what comes back per stream; the HTTP/3 bytes are built by
/// hand (`h3_*` below), not by nghttp3, so the tests see what tern put on the wire. Nothing
/// runs between calls: the test drives the connection with `pump`.

#include <chrono>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace tern_test {

/// One QUIC connection to 127.0.0.1:port. Throws std::runtime_error when the socket, ngtcp2
/// or GnuTLS cannot be set up.
class quic_client {
public:
    /// What the server did on one stream.
    struct stream_state {
        std::vector<std::uint8_t> bytes;  ///< stream data received, in order
        bool ended = false;               ///< the server ended its side (FIN)
        bool reset = false;               ///< the server reset its side (RESET_STREAM)
        std::uint64_t reset_code = 0;     ///< the application error code of that reset
        bool closed = false;              ///< QUIC forgot the stream (both sides done)
        std::uint64_t acked = 0;          ///< bytes the client sent that the server acknowledged
    };

    /// `stream_window`: the bytes the server may send on a request stream before the client
    /// has read them (QUIC's initial_max_stream_data_bidi_local), granted again as they come.
    explicit quic_client(std::uint16_t port, std::uint64_t stream_window = 1 << 20);
    ~quic_client();
    quic_client(const quic_client&) = delete;
    quic_client& operator=(const quic_client&) = delete;

    /// Sends the Initial and pumps until the handshake completes (true), the connection
    /// closes or `limit` passes (false). The server's Retry is followed (its token sent
    /// back): tern always answers a first Initial with one.
    bool handshake(std::chrono::milliseconds limit);
    /// Whether a Retry came (and was followed).
    bool retried() const noexcept;
    /// Sends the first datagram after the Retry (the Initial that carried its token) again,
    /// byte for byte, as a client does whose answer was lost (through the client's own
    /// socket, whatever `divert` says).
    void send_first_initial_again();
    /// Moves the connection to a new UDP socket on another local port (ngtcp2's immediate
    /// migration, to a connection ID the server issued for it), as a client behind a NAT
    /// whose mapping changed: the server sees the same connection from a new address. The
    /// old socket is closed. False when ngtcp2 refuses (no spare connection ID yet).
    bool migrate();

    /// Sends the next `count` datagrams through `fd` (an unconnected UDP socket bound to
    /// another address) to the server instead of through the client's own socket, as an
    /// attacker who rewrites their source address would: the server gets real, authenticated
    /// packets of this connection from an address that never answers. Replies to that address
    /// are for the test to read from `fd`. With `fd` -1 the datagrams are dropped: a client
    /// that goes silent (one whose handshake the server waits for, say).
    void divert(int fd, int count);
    /// The bytes sent through `divert`'s socket so far.
    std::size_t diverted_bytes() const noexcept;
    /// The connection ID the client sends its packets to (the server's, in use now).
    std::vector<std::uint8_t> server_cid() const;

    /// Opens a bidirectional stream: its ID, or -1 while the server's stream limit allows
    /// no more (pump until the server raises it). Nothing is sent until `send`.
    std::int64_t open_bidi();
    /// Opens a unidirectional stream: its ID, or -1 while the server's limit blocks it.
    std::int64_t open_uni();
    /// Queues a copy of `bytes` on stream `id` (`fin`: and its end), then writes what flow
    /// and congestion control let out now; the rest goes out with later pumps. The copy is
    /// kept until the stream closes (ngtcp2 resends lost packets from it).
    void send(std::int64_t id, std::span<const std::uint8_t> bytes, bool fin);
    /// Writes what is queued, then abandons stream `id` both ways with `app_code`
    /// (RESET_STREAM and STOP_SENDING, sent with the next write); bytes still queued on it
    /// are dropped.
    void reset(std::int64_t id, std::uint64_t app_code);

    /// While `hold` is true, the bytes that come grant the server no more flow-control
    /// credit, as a client that reads nothing: the server's answers stop at the window.
    /// Setting it false grants at once all the credit held back.
    void hold_window(bool hold);

    /// Writes what is pending, then reads the datagrams that came in, waiting for them up to
    /// `for_`: returns true as soon as some were read (and answered), false when `for_`
    /// passed without any or the connection is closed. Timers (retransmissions, the ACK
    /// delay, the idle timeout) are handled meanwhile. `pump(0ms)` waits for nothing.
    bool pump(std::chrono::milliseconds for_);
    /// Pumps until `done()` holds (true), the connection closes or `limit` passes (false,
    /// after a last look at `done()`).
    template <class F>
    bool pump_until(F done, std::chrono::milliseconds limit) {
        const auto until = std::chrono::steady_clock::now() + limit;
        while (!done()) {
            const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                until - std::chrono::steady_clock::now());
            if (closed() || left.count() <= 0) return done();
            pump(left);
        }
        return true;
    }

    /// Bytes the client may still send on stream `id` now: the credit the server's flow
    /// control gave it (MAX_STREAM_DATA) less what it sent; 0 while the server holds it back.
    std::uint64_t send_credit(std::int64_t id) const;

    /// What came back on stream `id` so far (empty when nothing did).
    stream_state stream(std::int64_t id) const;
    /// Whether the connection is over: a CONNECTION_CLOSE or stateless reset came, the idle
    /// timeout passed, or ngtcp2 failed. `close_reason` says which.
    bool closed() const noexcept;
    std::string close_reason() const;
    /// The number of bidirectional streams the server allows so far (its initial limit and
    /// every MAX_STREAMS since); 0 before the handshake.
    std::uint64_t max_bidi_streams() const noexcept;

private:
    struct state;
    std::unique_ptr<state> state_;
};

/// The client's HTTP/3 control stream's bytes (RFC 9114 6.2.1): the stream type 0x00 and
/// an empty SETTINGS frame. Sent on a unidirectional stream that stays open.
std::vector<std::uint8_t> h3_control_stream();
/// A GET request's HEADERS frame for `path` (RFC 9114 4.1, QPACK RFC 9204 without a
/// dynamic table): :method GET, :scheme https, :path, :authority 127.0.0.1.
std::vector<std::uint8_t> h3_get(std::string_view path);
/// A POST request's HEADERS frame for `path` with a `content-length` of `length` (the
/// fields of h3_get, :method POST), and `expect: 100-continue` when `expect_continue`.
std::vector<std::uint8_t> h3_post(std::string_view path, std::uint64_t length,
                                  bool expect_continue = false);
/// A POST request's HEADERS frame for `path` without a content-length (a body of unknown
/// length, its end the stream's).
std::vector<std::uint8_t> h3_post(std::string_view path);
/// A POST request's HEADERS frame as h3_post's with a length, and `content-type`.
std::vector<std::uint8_t> h3_post_typed(std::string_view path, std::uint64_t length,
                                        std::string_view content_type);
/// A DATA frame carrying `payload`.
std::vector<std::uint8_t> h3_data(std::string_view payload);
/// The status of the answer that begins `bytes` (a HEADERS frame whose field section
/// starts with an indexed :status of QPACK's static table): 200, 304, 404, 503 and the
/// other statuses of that table; 0 when `bytes` does not begin so, or not yet completely.
int h3_status(std::span<const std::uint8_t> bytes);
/// The status of every HEADERS frame in `bytes`, in order (interim answers, the final one,
/// trailers as 0): h3_status's reading of each.
std::vector<int> h3_statuses(std::span<const std::uint8_t> bytes);
/// The payloads of the DATA frames in `bytes`, joined (the frames complete so far).
std::string h3_body(std::span<const std::uint8_t> bytes);

}  // namespace tern_test

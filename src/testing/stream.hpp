#pragma once
// The byte stream under every client of the kit: one TCP connection to 127.0.0.1, plain or
// TLS, with the socket's blocking calls bounded by a deadline. TLS runs over two memory BIOs:
// OpenSSL encrypts into one and the kit sends its bytes with the socket's send (MSG_NOSIGNAL,
// so a closed peer is a return value, never a SIGPIPE), and the bytes the socket receives go
// into the other.

#include "testing/socket.hpp"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

struct ssl_st;  // OpenSSL's SSL, kept out of the kit's headers

namespace tern::testing::detail {

/// How a stream connects.
struct stream_options {
    /// TLS 1.2/1.3 with SNI "localhost", trusting only the kit's certificate (test_tls) and
    /// checking the name "localhost" in it.
    bool tls = false;
    /// With tls: the ALPN protocol to offer ("h2", "http/1.1"); empty: no ALPN.
    std::string alpn;
};

/// The options of an HTTP/1.1 connection: with `tls`, ALPN offers "http/1.1".
inline stream_options http1_stream(bool tls) { return {tls, tls ? "http/1.1" : ""}; }

/// An open connection to 127.0.0.1:port, TLS established when asked for; closed by the
/// destructor (without a TLS close_notify: a test client has nothing to flush).
class stream {
public:
    /// Connects (and makes the TLS handshake). Throws client_error when the port refuses or
    /// the handshake fails (the message says why: the certificate's verification, an alert
    /// of the server), timeout_error past `deadline`.
    stream(std::uint16_t port, const stream_options& options, clock::time_point deadline);
    ~stream();
    stream(stream&& other) noexcept;
    stream& operator=(stream&& other) noexcept;
    stream(const stream&) = delete;
    stream& operator=(const stream&) = delete;

    /// Sends all of `bytes`. False when the peer has closed or reset the connection;
    /// timeout_error past `deadline`; client_error for a TLS failure.
    bool send_all(std::string_view bytes, clock::time_point deadline);
    /// Receives up to `size` bytes into `out`: the count, 0 at the peer's close (or reset).
    /// timeout_error past `deadline`.
    std::size_t receive(char* out, std::size_t size, clock::time_point deadline);
    /// Like `receive`, but returns -1 instead of throwing when nothing arrived by `deadline`.
    std::ptrdiff_t receive_until(char* out, std::size_t size, clock::time_point deadline);
    /// True when the connection can take a new request: the peer has neither closed it nor
    /// sent data unasked. TLS records without data (TLS 1.3 session tickets) are read and
    /// do not count.
    bool idle_and_open();
    /// The protocol the server chose by ALPN; empty without TLS or when it chose none.
    std::string alpn() const;

private:
    struct ssl_free {
        void operator()(ssl_st* ssl) const noexcept;
    };

    void handshake(const stream_options& options, clock::time_point deadline);
    // Sends what OpenSSL has written: false when the peer has closed.
    bool flush(clock::time_point deadline);
    // Moves received bytes into OpenSSL: their count, 0 at the close, -1 past `deadline`.
    std::ptrdiff_t feed(clock::time_point deadline);
    std::ptrdiff_t tls_receive(char* out, std::size_t size, clock::time_point deadline);
    bool tls_send_all(std::string_view bytes, clock::time_point deadline);

    socket socket_;
    std::unique_ptr<ssl_st, ssl_free> ssl_;  // null for a plain connection
};

}  // namespace tern::testing::detail

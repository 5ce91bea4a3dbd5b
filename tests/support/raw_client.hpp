#pragma once
/// @file raw_client.hpp
/// A blocking-socket HTTP/1.1 client for loopback wire tests: it sends exactly the bytes a
/// test gives it and parses responses strictly, so the tests see what the server really put
/// on the wire. No asio, no curl. Its socket calls are libtern's platform seam
/// (src/platform/socket_api.hpp), so it runs on POSIX and on Windows (Winsock) alike.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tern_test {

/// A socket as the system names it, without the system's headers: a descriptor on POSIX, a
/// Winsock SOCKET (an unsigned handle the size of a pointer) on Windows.
#if defined(_WIN32)
using socket_type = std::uintptr_t;
#else
using socket_type = int;
#endif
/// The socket_type no socket has (-1; INVALID_SOCKET on Windows).
inline constexpr socket_type no_socket = static_cast<socket_type>(-1);

/// Thrown when the client cannot do what a test asked: a timeout, an early close, a
/// malformed response. The message says what was received, so a failing test explains
/// itself instead of hanging.
class client_error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

/// One HTTP response as it came off the wire.
struct response {
    int status = 0;       ///< The three-digit status code.
    std::string reason;   ///< The reason phrase (may be empty).
    std::string version;  ///< e.g. "HTTP/1.1".
    std::vector<std::pair<std::string, std::string>> headers;  ///< In order, as received.
    std::string body;  ///< De-framed body (by Content-Length, chunked, or close).

    /// The value of the first header named `name` (case-insensitive); nullopt when absent.
    std::optional<std::string> header(std::string_view name) const;
    /// How many header fields are named `name` (case-insensitive).
    std::size_t header_count(std::string_view name) const;
};

/// A readable one-line summary of `r` (status line, headers, start of body) for INFO().
std::string describe(const response& r);

/// True when `a` and `b` are equal ignoring ASCII case.
bool iequals(std::string_view a, std::string_view b) noexcept;

/// True when the comma-separated header value `list` holds `token` (case-insensitive),
/// e.g. has_token("keep-alive, Close", "close").
bool has_token(std::string_view list, std::string_view token);

/// True when `value` has the IMF-fixdate shape of RFC 9110 §5.6.7,
/// e.g. "Sun, 06 Nov 1994 08:49:37 GMT".
bool is_imf_fixdate(std::string_view value);

/// "GET <target> HTTP/1.1" with `Host: localhost`, then `extra_headers` (each line ending
/// in CRLF), then the empty line.
std::string get_request(std::string_view target, std::string_view extra_headers = {});

/// A request for `method` and `target` with `Host: localhost`, `extra_headers`, a
/// Content-Length for `body`, and the body.
std::string body_request(std::string_view method, std::string_view target, std::string_view body,
                         std::string_view extra_headers = {});

/// What start_tls offers and checks. The defaults are OpenSSL's client defaults with no
/// certificate verification.
struct tls_options {
    /// The server name sent as SNI; empty: no SNI extension.
    std::string server_name;
    /// The protocols offered by ALPN, e.g. {"http/1.1"}; empty: no ALPN extension.
    std::vector<std::string> alpn;
    /// The lowest and highest protocol version offered, as OpenSSL's TLS1_VERSION ...
    /// TLS1_3_VERSION (0x0301 ... 0x0304); 0: OpenSSL's default. When either is below
    /// TLS 1.2 the client runs at OpenSSL security level 0, so it really offers TLS 1.0/1.1
    /// (and their ciphers) and the server is the one that refuses.
    int min_version = 0;
    int max_version = 0;
    /// Verify the server's chain against this CA (PEM, one or more certificates); empty:
    /// no verification. The host name is not checked.
    std::string ca_pem;
    /// The TLS 1.2 cipher list (SSL_CTX_set_cipher_list syntax); empty: OpenSSL's default.
    std::string cipher_list;
    /// A client certificate (PEM) and its key (PEM, in the clear); both empty: none.
    std::string client_cert_pem;
    std::string client_key_pem;
};

/// The bytes of the ClientHello that start_tls(`options`) would send first (one TLS
/// record), made by OpenSSL without a socket. Sending part of it with send() stalls a
/// server's handshake, e.g. to test a handshake deadline. Throws client_error when
/// `options` is unusable.
std::string tls_client_hello(const tls_options& options = {});

/// A blocking loopback client (TCP to 127.0.0.1 by default; also a numeric IPv4 or IPv6
/// address, or a Unix domain socket, except on Windows). Every read has a deadline (5 s by
/// default); on timeout it throws client_error rather than hanging. Received bytes are buffered, so
/// several pipelined responses can be read one after another.
///
/// After start_tls() every operation (send, shutdown_write, every read) goes through TLS,
/// so the response parsing works over HTTPS unchanged.
class raw_client {
public:
    /// The default deadline of one read operation.
    static constexpr std::chrono::milliseconds default_timeout{5000};

    /// An unconnected client.
    raw_client() = default;
    /// A client connected to 127.0.0.1:`port`; throws client_error when it cannot connect.
    explicit raw_client(std::uint16_t port);
    ~raw_client();
    raw_client(raw_client&& other) noexcept;
    raw_client& operator=(raw_client&& other) noexcept;
    raw_client(const raw_client&) = delete;
    raw_client& operator=(const raw_client&) = delete;

    /// Connects to 127.0.0.1:`port`; throws client_error when it cannot.
    void connect(std::uint16_t port);
    /// Connects to `address`, a numeric IPv4 or IPv6 address (e.g. "::1"), on `port`; throws
    /// client_error when it cannot, or when `address` is not numeric.
    void connect(std::string_view address, std::uint16_t port);
    /// Connects to the Unix domain socket at `path`; throws client_error when it cannot
    /// (e.g. ENOENT once the server has removed the socket file), and always on Windows.
    void connect_unix(std::string_view path);
    /// Tries once to connect to 127.0.0.1:`port`: 0 on success (the socket is then closed),
    /// otherwise the errno of the failure (ECONNREFUSED when nothing listens).
    static int connect_error(std::uint16_t port);
    /// True while the socket is open on this side.
    bool is_open() const noexcept { return fd_ != no_socket; }
    /// Closes the socket (if open) and drops buffered bytes. Over TLS it frees the TLS
    /// state without sending close_notify (shutdown_write() sends one).
    void close() noexcept;

    /// Runs a TLS handshake over the connected socket, as a client offering `options`,
    /// within the read deadline (set_timeout). True on success: from then on every
    /// operation goes through TLS. False when the handshake fails (the server refused,
    /// closed, or did not finish in time, or verification against `options.ca_pem`
    /// failed): tls_error() then says why, and the socket stays open for plain checks such
    /// as closed_by_peer(). Throws client_error when not connected, when TLS is already
    /// active, or when `options` itself is unusable (a bad cipher list, a client
    /// certificate or CA that does not parse).
    bool start_tls(const tls_options& options);
    /// True after a successful start_tls(), until close().
    bool tls_active() const noexcept { return tls_ != nullptr; }
    /// Why the last start_tls() failed, or the alert or error that ended a TLS connection
    /// afterwards (e.g. a TLS 1.3 server refusing the client certificate after the
    /// handshake). OpenSSL's error strings, e.g. "error:0A00042E:SSL
    /// routines::tlsv1 alert protocol version", then any alert received or sent, e.g.
    /// "alert received: fatal protocol version (70)"; or "the server closed the connection
    /// without close_notify". Empty when there was none.
    std::string tls_error() const { return tls_error_; }
    /// The negotiated protocol version, e.g. "TLSv1.3" (SSL_get_version); empty without TLS.
    std::string tls_version() const;
    /// The protocol the server selected by ALPN; empty when none (or without TLS).
    std::string tls_alpn() const;
    /// The server's leaf certificate as PEM; empty without TLS.
    std::string tls_peer_cert_pem() const;
    /// The negotiated cipher suite's OpenSSL name, e.g. "TLS_AES_256_GCM_SHA384" or
    /// "ECDHE-RSA-AES128-GCM-SHA256"; empty without TLS.
    std::string tls_cipher() const;
    /// True when a read has seen the server's close_notify; false before, without TLS, or
    /// when the server closed the TCP connection without one.
    bool tls_close_notify_received() const noexcept;

    /// Sets the deadline used by reads that are not given one.
    void set_timeout(std::chrono::milliseconds timeout) noexcept { timeout_ = timeout; }

    /// Sends all of `bytes`; throws client_error on failure.
    void send(std::string_view bytes);
    /// Sends what it can of `bytes` within `timeout`, keeping whatever the server sends
    /// meanwhile in buffered(): a server that answers, or stops reading, before the input
    /// ends cannot block the client on full socket buffers (send() would). For inputs sent
    /// whole whatever the server does, such as a fuzzing corpus. Returns how many bytes went
    /// out: fewer when the server closed or reset the connection (EPIPE, ECONNRESET) or the
    /// timeout passed. Plain connections only (client_error over TLS).
    std::size_t send_while_reading(std::string_view bytes, std::chrono::milliseconds timeout);
    /// Sends `bytes`, then closes the socket without reading anything.
    void send_raw_and_close(std::string_view bytes);
    /// Shuts down the sending side (the server sees end of input). Over TLS it sends
    /// close_notify first.
    void shutdown_write();

    /// Reads and parses ONE response. A 1xx interim response is returned on its own. No
    /// body is read for 1xx, 204, 304 or when `head_request` is true. Throws client_error
    /// on timeout, on a close before the response is complete, or on a malformed response.
    response read_response(bool head_request = false);
    /// As read_response(head_request), with its own deadline.
    response read_response(bool head_request, std::chrono::milliseconds timeout);

    /// Returns every byte (buffered first) until the peer closes. Throws client_error when
    /// the peer does not close within the deadline.
    std::string read_all_until_close();
    /// As read_all_until_close(), with its own deadline.
    std::string read_all_until_close(std::chrono::milliseconds timeout);

    /// True when the peer closes (recv returns 0 or ECONNRESET) within the deadline, false
    /// when it does not. Bytes received meanwhile are kept (see buffered()). Over TLS a
    /// close_notify, a TCP close without one, and a fatal alert all count as a close.
    bool closed_by_peer();
    /// As closed_by_peer(), with its own deadline.
    bool closed_by_peer(std::chrono::milliseconds timeout);

    /// Waits up to `timeout` for the server to send something or close; true when it did
    /// (the bytes are kept in buffered()). Lets a slow client stop sending once answered.
    bool answered_within(std::chrono::milliseconds timeout);

    /// Waits up to `timeout` for more bytes (kept in buffered(), after what is there);
    /// false when none came (a timeout, or the peer closed). For endless responses (a
    /// stream, SSE) that read_response cannot finish.
    bool receive_more(std::chrono::milliseconds timeout);

    /// Bytes received but not yet consumed by a read_* call.
    const std::string& buffered() const noexcept { return buffer_; }
    /// Drops the first `n` buffered bytes (a caller that parsed them itself).
    void consume(std::size_t n) { buffer_.erase(0, n); }

private:
    enum class recv_status { data, closed, timed_out };
    using clock = std::chrono::steady_clock;

    // Waits until the deadline for bytes and appends them to buffer_.
    recv_status receive_some(clock::time_point deadline);
    // Reads until buffer_ holds at least `n` bytes; throws client_error otherwise.
    void fill_to(std::size_t n, clock::time_point deadline, std::string_view what);
    // Reads until buffer_ holds `delimiter` at or after `from`; returns its position.
    std::size_t fill_until(std::string_view delimiter, std::size_t from, clock::time_point deadline,
                           std::string_view what);
    [[noreturn]] void fail(std::string_view what, std::string_view why) const;
    // Takes `fd`, a newly connected socket (after close()).
    void adopt(socket_type fd) noexcept;
    // receive_some and send over TLS.
    recv_status tls_receive_some(clock::time_point deadline);
    void tls_send(std::string_view bytes);

    // The OpenSSL objects of an active TLS connection (raw_client.cpp).
    struct tls_state;
    friend std::string tls_client_hello(const tls_options& options);

    socket_type fd_ = no_socket;
    tls_state* tls_ = nullptr;  // Owned; null while the connection is plain.
    std::string tls_error_;
    bool peer_closed_ = false;
    std::string buffer_;
    std::chrono::milliseconds timeout_ = default_timeout;
};

/// Opens `n` clients to 127.0.0.1:`port`, all connected at once.
std::vector<raw_client> open_clients(std::uint16_t port, std::size_t n);

}  // namespace tern_test

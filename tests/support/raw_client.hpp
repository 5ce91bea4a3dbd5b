#pragma once
/// @file raw_client.hpp
/// A blocking POSIX-socket HTTP/1.1 client for loopback wire tests: it sends exactly the
/// bytes a test gives it and parses responses strictly, so the tests see what the server
/// really put on the wire. No asio, no curl.

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

/// A blocking loopback client. Every read has a deadline (5 s by default); on timeout it
/// throws client_error rather than hanging. Received bytes are buffered, so several
/// pipelined responses can be read one after another.
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
    /// Tries once to connect to 127.0.0.1:`port`: 0 on success (the socket is then closed),
    /// otherwise the errno of the failure (ECONNREFUSED when nothing listens).
    static int connect_error(std::uint16_t port);
    /// True while the socket is open on this side.
    bool is_open() const noexcept { return fd_ >= 0; }
    /// Closes the socket (if open) and drops buffered bytes.
    void close() noexcept;

    /// Sets the deadline used by reads that are not given one.
    void set_timeout(std::chrono::milliseconds timeout) noexcept { timeout_ = timeout; }

    /// Sends all of `bytes`; throws client_error on failure.
    void send(std::string_view bytes);
    /// Sends `bytes`, then closes the socket without reading anything.
    void send_raw_and_close(std::string_view bytes);
    /// Shuts down the sending side (the server sees end of input).
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
    /// when it does not. Bytes received meanwhile are kept (see buffered()).
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

    int fd_ = -1;
    bool peer_closed_ = false;
    std::string buffer_;
    std::chrono::milliseconds timeout_ = default_timeout;
};

/// Opens `n` clients to 127.0.0.1:`port`, all connected at once.
std::vector<raw_client> open_clients(std::uint16_t port, std::size_t n);

}  // namespace tern_test

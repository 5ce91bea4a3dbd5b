#pragma once
/// @file testing.hpp
/// The test kit (`tern::testing`, CMake target `tern::testing`): run a tern::app on a free
/// loopback port for the length of a test and call it with a real client over a real socket,
/// HTTP/1.1 or HTTP/2 (h2 by ALPN over HTTPS, h2c without), plain or HTTPS (test_tls() gives
/// the app a certificate the kit's clients trust); read its Server-Sent Events with
/// sse_reader and talk to its WebSockets with ws_client, over TLS too. No test framework is
/// assumed: the kit returns values and throws std::exception subclasses, which Catch2,
/// GoogleTest and plain asserts all report.
///
///     tern::testing::test(app, [](tern::testing::server&, tern::testing::client& http) {
///         assert(http.get("/hello").body == "hello");
///     });
///
/// JSON helpers (`response::json()`, `client::post_json`) need <tern/json.hpp> included
/// before use, like `ctx.json`. See docs/testing.md.

#include <tern/app.hpp>
#include <tern/context.hpp>
#include <tern/tls.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace tern::testing {

/// A failure of the client: the server could not be reached, the TLS handshake failed, the
/// connection broke before the response was complete, the response was not valid HTTP/1.1
/// or HTTP/2, or the server reset the request's HTTP/2 stream (RST_STREAM) or ended the
/// connection (GOAWAY) before answering it. The message says which, with the request's
/// method and target (and the HTTP/2 error code's name).
class client_error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

/// The server sent nothing (or not the whole response) within the client's timeout.
class timeout_error : public client_error {
public:
    using client_error::client_error;
};

/// The server ended the stream: an event stream (sse_reader) or a WebSocket (ws_client, as
/// ws_closed). The message names the stream.
class stream_ended : public client_error {
public:
    using client_error::client_error;
};

/// One header field of a response, or one extra field of a request.
struct header {
    std::string name;   ///< As sent (compared case-insensitively by the kit).
    std::string value;  ///< Without surrounding whitespace.
};

/// Header fields in the order they were sent.
using header_list = std::vector<header>;

/// HTTPS settings for an app under test: one certificate (self-signed, ECDSA P-256, subject
/// alternative names DNS:localhost and IP:127.0.0.1, valid from an hour ago for 30 days),
/// made with OpenSSL's API the first time any of these is called and then shared by the
/// process (thread-safe); the key exists in memory only. Use:
/// `app.tls(tern::testing::test_tls());`. Throws std::runtime_error when OpenSSL cannot make
/// the certificate.
tern::tls_config test_tls();
/// That certificate as PEM, for other clients to trust (e.g. written to a file for
/// `curl --cacert`).
const std::string& test_certificate_pem();

/// How a client reaches the server.
struct client_options {
    /// HTTPS: TLS 1.2/1.3, sending SNI "localhost", trusting only the kit's certificate and
    /// checking the name (a server with another certificate fails the handshake:
    /// client_error naming why). Default off: plain HTTP.
    bool tls = false;
    /// HTTP/2 (nghttp2's client session): h2 by ALPN with tls (a server that does not pick h2
    /// is a client_error), h2c with prior knowledge without. Default off: HTTP/1.1.
    bool http2 = false;
};

/// A complete response as the client read it off the wire.
struct response {
    int status = 0;        ///< The status code, e.g. 200.
    std::string reason;    ///< The reason phrase, e.g. "OK" (may be empty; none over HTTP/2).
    header_list headers;   ///< Every field of the head, then the trailer's, in order.
    std::string body;      ///< The body, de-chunked; empty for HEAD, 1xx, 204 and 304.
    std::string protocol;  ///< "HTTP/1.1", "HTTP/1.0" or "HTTP/2".

    /// The value of the first field named `name` (case-insensitive); std::nullopt when there
    /// is none. The view points into this response.
    std::optional<std::string_view> header(std::string_view name) const;
    /// The values of every field named `name` (case-insensitive), in order (e.g. each
    /// Set-Cookie).
    std::vector<std::string_view> header_values(std::string_view name) const;
    /// The body parsed as JSON (nlohmann::json). Needs <tern/json.hpp>; a body that is not
    /// JSON throws nlohmann::json::parse_error.
    template <class Tag = tern::detail::json_tag>
    auto json() const -> typename tern::detail::json_support<Tag>::value_type {
        return tern::detail::json_support<Tag>::value_type::parse(body);
    }
};

/// One request of client::send_all. Every field has a default, so designated initializers
/// may name only some: `{.target = "/users"}`.
struct request {
    std::string method = "GET";  ///< The method.
    std::string target{};        ///< A path with an optional query, e.g. "/users?limit=2".
    std::string body{};          ///< The body, framed as client::request frames it.
    header_list headers{};       ///< Extra fields, as a call's `extra`.
};

/// One keep-alive connection to a server on 127.0.0.1, HTTP/1.1 by default, HTTPS and HTTP/2
/// by client_options, opened on the first call and opened again when the server has closed
/// it (a request sent on a connection the server closed meanwhile is retried once on a new
/// one). Every call sends `Host` (HTTP/2: `:authority`), the default headers, the cookies of
/// the jar and `Content-Length` for a body, then reads the whole response (HTTP/1.1:
/// Content-Length, chunked or close-delimited; none for HEAD, 1xx, 204 and 304). Interim 1xx
/// responses (100, 103) are skipped; a 101 is returned and ends the connection.
///
/// HTTP/2: one connection, one stream per request; field names are sent in lower case and
/// the fields HTTP/2 forbids (Connection, Keep-Alive, Proxy-Connection, Transfer-Encoding,
/// Upgrade) are left out. A stream the server resets (RST_STREAM) or a connection it ends
/// (GOAWAY) before the response is complete is a client_error naming the error code; the
/// connection stays usable after a reset.
///
/// Cookie jar: each Set-Cookie of a response is kept by name and Path (RFC 6265 default
/// path when it has none) and sent back on later calls whose target is within that path;
/// Max-Age (0 or less removes it) and Expires (IMF-fixdate; in the past removes it) are
/// honoured. Domain is ignored (every cookie is for this server); Secure cookies are sent
/// too (loopback is treated as secure, as browsers do for localhost); HttpOnly and SameSite
/// do not apply to a test client.
///
/// Errors: client_error when the server cannot be reached, the TLS handshake fails or the
/// answer is not valid HTTP, timeout_error when a response takes longer than `timeout()`
/// (default 10 s). A client is used by one thread at a time.
class client {
public:
    /// A plain HTTP/1.1 client for the server on 127.0.0.1 at `port`. Connects on the first
    /// call.
    explicit client(std::uint16_t port);
    /// A client for the server on 127.0.0.1 at `port` that speaks as `options` say (HTTPS,
    /// HTTP/2). Connects on the first call.
    client(std::uint16_t port, client_options options);
    /// Closes the connection.
    ~client();
    /// Takes over `other`'s connection, settings and cookies.
    client(client&& other) noexcept;
    /// Takes over `other`'s connection, settings and cookies, closing this one's.
    client& operator=(client&& other) noexcept;
    /// Not copyable: a connection has one owner.
    client(const client&) = delete;
    /// Not copyable.
    client& operator=(const client&) = delete;

    /// Sends `name: value` on every later call (replacing a default of the same name).
    client& header(std::string name, std::string value);
    /// How long one call (connect, send, the whole response) may take before timeout_error
    /// (default 10 s).
    client& timeout(std::chrono::milliseconds limit);
    /// Puts cookie `name=value` in the jar for every path, as if the server had set it.
    client& cookie(std::string name, std::string value);
    /// The value of cookie `name` in the jar (the first set, when several paths hold one).
    std::optional<std::string> cookie(std::string_view name) const;
    /// Empties the cookie jar.
    client& clear_cookies();

    /// GET `target` (a path with an optional query, e.g. "/users?limit=2").
    response get(std::string_view target, const header_list& extra = {});
    /// HEAD `target`: the response has the GET's head and no body.
    response head(std::string_view target, const header_list& extra = {});
    /// DELETE `target`.
    response del(std::string_view target, const header_list& extra = {});
    /// POST `body` with `Content-Type: content_type`.
    response post(std::string_view target, std::string_view body,
                  std::string content_type = "text/plain", const header_list& extra = {});
    /// PUT `body` with `Content-Type: content_type`.
    response put(std::string_view target, std::string_view body,
                 std::string content_type = "text/plain", const header_list& extra = {});
    /// PATCH `body` with `Content-Type: content_type`.
    response patch(std::string_view target, std::string_view body,
                   std::string content_type = "text/plain", const header_list& extra = {});
    /// Any method: `body` goes with a Content-Length (also 0 for POST, PUT and PATCH) and
    /// no Content-Type unless `extra` has one.
    response request(std::string_view method, std::string_view target, std::string_view body = {},
                     const header_list& extra = {});

    /// POST `value` as JSON (nlohmann_json; a `to_json` of your type works). Needs
    /// <tern/json.hpp>.
    template <class T, class Tag = tern::detail::json_tag>
    response post_json(std::string_view target, const T& value, const header_list& extra = {}) {
        return post(target, tern::detail::json_support<Tag>::dump(value), "application/json",
                    extra);
    }
    /// POST a JSON literal: `post_json("/users", {{"name", "ada"}})`.
    template <class Tag = tern::detail::json_tag>
    response post_json(std::string_view target,
                       typename tern::detail::json_support<Tag>::initializer_list value,
                       const header_list& extra = {}) {
        return post(target, tern::detail::json_support<Tag>::dump(value), "application/json",
                    extra);
    }
    /// PUT `value` as JSON. Needs <tern/json.hpp>.
    template <class T, class Tag = tern::detail::json_tag>
    response put_json(std::string_view target, const T& value, const header_list& extra = {}) {
        return put(target, tern::detail::json_support<Tag>::dump(value), "application/json", extra);
    }
    /// PUT a JSON literal.
    template <class Tag = tern::detail::json_tag>
    response put_json(std::string_view target,
                      typename tern::detail::json_support<Tag>::initializer_list value,
                      const header_list& extra = {}) {
        return put(target, tern::detail::json_support<Tag>::dump(value), "application/json", extra);
    }

    /// Sends every request at once and returns the responses in the same order: over HTTP/2
    /// as concurrent streams on the one connection, over HTTP/1.1 one after another. The jar's
    /// cookies are those it holds when each request goes out (over HTTP/2: before any
    /// answer); every response's Set-Cookie is stored. The timeout bounds all of them
    /// together. Errors as the single calls: the first request that failed (in order) is
    /// named.
    std::vector<response> send_all(const std::vector<testing::request>& requests);

    /// Sends `bytes` exactly as given on a new connection of its own (the keep-alive one is
    /// left alone) and returns everything the server sent back until it closed the
    /// connection, or until nothing more arrived for `quiet` (default 500 ms) — so an
    /// answer to a well-formed keep-alive request also comes back. Within `timeout()` in
    /// all (then what arrived so far is returned) and 16 MiB (more throws client_error);
    /// client_error when the port refuses. For malformed-request tests. Over TLS with
    /// client_options::tls; HTTP/1.1 only: std::logic_error on an HTTP/2 client.
    std::string raw(std::string_view bytes,
                    std::chrono::milliseconds quiet = std::chrono::milliseconds(500));

    /// The port this client calls.
    std::uint16_t port() const noexcept;
    /// Closes the keep-alive connection (the next call opens a new one).
    void disconnect() noexcept;

private:
    struct impl;
    std::unique_ptr<impl> impl_;
};

/// One Server-Sent Event as sse_reader read it (the HTML event-stream format).
struct sse_event {
    /// The stream's last event id after this event (its `id:`, or the one of an earlier event
    /// when it has none; empty when no event had one).
    std::string id;
    /// Its `event:`, or "message" when it named none.
    std::string type;
    /// Its `data:` lines joined with "\n".
    std::string data;
};

/// Options of sse_reader.
struct sse_options {
    /// Sent as `Last-Event-ID` when not empty (as by a reconnecting EventSource), and the
    /// reader's last_event_id() until an event sets another.
    std::string last_event_id;
    /// Extra request fields (e.g. Cookie, Authorization); an Accept here replaces the
    /// reader's `Accept: text/event-stream`.
    header_list headers;
    /// How long connecting and reading the response head may take, and each next().
    std::chrono::milliseconds timeout{5000};
    /// Over HTTPS (as client_options::tls). server::sse sets it for an app that serves HTTPS.
    bool tls = false;
};

/// A Server-Sent Events client over one HTTP/1.1 connection to 127.0.0.1 (HTTPS with
/// sse_options::tls), reading the event stream as EventSource does (HTML standard,
/// "Server-sent events"): lines end at CRLF, LF or CR; `data:` lines are joined with "\n";
/// `id:` sets the last event id (kept for later events); `retry:` sets retry(); comments and
/// events without data are skipped. The chunked (or Content-Length, or close-delimited)
/// framing of the body is removed. It does not reconnect by itself: reconnect() does, when
/// the test says so. Move-only; one thread at a time.
class sse_reader {
public:
    /// Connects to 127.0.0.1:`port`, sends `GET target` with `Accept: text/event-stream`,
    /// `Cache-Control: no-cache`, `Last-Event-ID` when `options.last_event_id` is not empty
    /// and the options' fields, and reads the response head. Throws client_error (the
    /// message names the status, the Content-Type and the start of the body) unless the
    /// answer is 200 with a `text/event-stream` Content-Type, and timeout_error when
    /// connecting and the head take longer than `options.timeout`.
    sse_reader(std::uint16_t port, std::string target, sse_options options = {});
    /// Closes the connection.
    ~sse_reader();
    /// Takes over `other`'s connection; `other` is left empty (only destroyable).
    sse_reader(sse_reader&& other) noexcept;
    /// Takes over `other`'s connection, closing this one's.
    sse_reader& operator=(sse_reader&& other) noexcept;
    /// Not copyable: a connection has one owner.
    sse_reader(const sse_reader&) = delete;
    /// Not copyable.
    sse_reader& operator=(const sse_reader&) = delete;

    /// The fields of the response head (of the last connection, after a reconnect()).
    const header_list& headers() const noexcept;
    /// The next event; comments, unknown fields and events without data are skipped.
    /// timeout_error when none is complete within the timeout (the reader stays usable: a
    /// later call goes on where this one stopped); stream_ended when the server ended the
    /// stream (the last chunk, or a close; an event it did not finish is dropped, as
    /// EventSource drops it); client_error for a malformed chunked framing or after close().
    sse_event next();
    /// The stream's last event id: of the last event next() returned (or an id-only event
    /// before it), else `options.last_event_id`. reconnect() sends it.
    const std::string& last_event_id() const noexcept;
    /// The last `retry:` value the server sent, 0 when none.
    std::chrono::milliseconds retry() const noexcept;
    /// Closes the connection and opens a new one with the same request, now with
    /// `Last-Event-ID: last_event_id()` when that is not empty, as EventSource reconnects
    /// (without waiting for retry()). Errors as the constructor.
    void reconnect();
    /// Closes the connection (reconnect() opens another).
    void close() noexcept;

private:
    struct impl;
    std::unique_ptr<impl> impl_;
};

/// One WebSocket data message as ws_client received it (fragments joined).
struct ws_message {
    /// True for a binary message, false for text (valid UTF-8, checked).
    bool binary = false;
    /// The payload: the text, or the bytes.
    std::string data;
};

/// Options of ws_client.
struct ws_options {
    /// Offered in `Sec-WebSocket-Protocol`, in this order (none when empty).
    std::vector<std::string> subprotocols;
    /// Extra handshake fields (Origin, Cookie, Authorization, ...).
    header_list headers;
    /// How long the handshake may take, and each receive(), close() and wait_close().
    std::chrono::milliseconds timeout{5000};
    /// 0: each message goes in one frame; otherwise in fragments of at most this many bytes
    /// (a text message may then be split inside a UTF-8 character, as RFC 6455 allows).
    std::size_t fragment_size = 0;
    /// wss: over TLS (as client_options::tls). server::ws sets it for an app that serves
    /// HTTPS.
    bool tls = false;
};

/// The server closed the WebSocket: its close code (1005 when its Close frame had none, 1006
/// when the TCP connection ended without a Close frame) and reason.
class ws_closed : public stream_ended {
public:
    /// `message` for what(), the server's `code` and `reason`.
    ws_closed(const std::string& message, int code, std::string reason);
    /// The close code.
    int code() const noexcept;
    /// The close reason (empty when none).
    const std::string& reason() const noexcept;

private:
    int code_;
    std::string reason_;
};

/// A WebSocket client (RFC 6455) over one connection to 127.0.0.1 (wss with ws_options::tls),
/// for testing `app.ws`
/// routes. It masks every frame it sends with a new random mask, answers pings and the
/// server's Close, and reads strictly: a server frame with a reserved bit set, an unknown
/// opcode, a mask, a length not in its shortest form, a fragmented or over-125-byte control
/// frame, a stray continuation, text (or a close reason) that is not UTF-8, or a message
/// over 256 MiB throws client_error. No extension is offered (no permessage-deflate).
/// Move-only; one thread at a time. The destructor closes the TCP connection without a
/// closing handshake (the server sees 1006): call close() for one.
class ws_client {
public:
    /// Opens the WebSocket at `target` (path and query): sends the RFC 6455 section 4.1
    /// handshake (a random 16-byte `Sec-WebSocket-Key`, version 13, the subprotocols and the
    /// options' fields) and checks the answer: 101, `Upgrade: websocket`, `Connection:
    /// Upgrade`, `Sec-WebSocket-Accept` (base64 of the SHA-1 of the key and the RFC's GUID),
    /// a subprotocol only from the offered ones and no extension. Throws client_error naming
    /// the status (and the start of the body) when the server answers anything else, and
    /// timeout_error past `options.timeout`.
    ws_client(std::uint16_t port, std::string target, ws_options options = {});
    /// Closes the TCP connection (no closing handshake).
    ~ws_client();
    /// Takes over `other`'s connection; `other` is left empty (only destroyable).
    ws_client(ws_client&& other) noexcept;
    /// Takes over `other`'s connection, closing this one's.
    ws_client& operator=(ws_client&& other) noexcept;
    /// Not copyable: a connection has one owner.
    ws_client(const ws_client&) = delete;
    /// Not copyable.
    ws_client& operator=(const ws_client&) = delete;

    /// The subprotocol the server chose, empty when none.
    const std::string& subprotocol() const noexcept;
    /// The fields of the server's 101 answer.
    const header_list& headers() const noexcept;

    /// Sends a text message (in fragments of `fragment_size` when set). The text is sent as
    /// given: invalid UTF-8 makes the server close with 1007. ws_closed when the server has
    /// closed; timeout_error when it takes nothing more within the timeout.
    void send_text(std::string_view text);
    /// Sends a binary message (in fragments of `fragment_size` when set). Errors as
    /// send_text.
    void send_binary(std::string_view bytes);
    /// The next data message. Pings that arrive meanwhile are answered with pongs, pongs
    /// are skipped. timeout_error when none is complete within the timeout (a later call goes
    /// on where this one stopped); ws_closed when the server's Close arrives (the client
    /// answers it with the same code and closes the connection) or the connection ends
    /// without one (1006), and on every later call.
    ws_message receive();
    /// Sends a ping with `payload` (at most 125 bytes, else std::invalid_argument); the
    /// server's pong is skipped by receive().
    void ping(std::string_view payload = {});
    /// The closing handshake: sends Close with `code` (1000-4999, else std::invalid_argument)
    /// and `reason` (at most 123 bytes), waits for the server's Close (data messages arriving
    /// meanwhile are discarded) and returns its code: 1005 when it had none, 1006 when the
    /// connection ended without one. timeout_error when none comes within the timeout. When
    /// the server closed first, returns its code and sends nothing.
    int close(int code = 1000, std::string_view reason = {});
    /// Waits for the server to close, answering its Close: returns its code (1005 when it had
    /// none, 1006 when the TCP connection ended without a Close). Data messages arriving
    /// meanwhile are discarded; timeout_error when the server keeps the WebSocket open.
    int wait_close();
    /// Sends `bytes` as they are, unframed and unmasked (for hostile-input tests: an
    /// unmasked frame, a bad opcode, a bad length). ws_closed when the connection is gone.
    void send_raw(std::string_view bytes);

private:
    struct impl;
    std::unique_ptr<impl> impl_;
};

/// RAII: starts `app` on 127.0.0.1 at a free port (`app.start("127.0.0.1", 0)`, in the
/// app's own worker threads) and stops it when destroyed. Throws what `app.start` throws
/// (std::system_error, std::logic_error when the app is already running). Register routes
/// and settings before: they are fixed once the app runs.
class server {
public:
    /// Starts `app`; it must outlive this server.
    explicit server(tern::app& app);
    /// Stops the app (`app.stop()`): after that its port refuses connections.
    ~server();
    /// Not copyable: one server stops its app once.
    server(const server&) = delete;
    /// Not copyable.
    server& operator=(const server&) = delete;

    /// The bound port.
    std::uint16_t port() const noexcept;
    /// A new HTTP/1.1 client for this server: over TLS when the app serves HTTPS.
    client make_client() const;
    /// A new client for this server with `options`; `tls` is set for the caller when the app
    /// serves HTTPS (a plain client for it: `client(server.port(), options)`).
    client make_client(client_options options) const;
    /// Opens an event stream at `target` on this server (sse_reader's constructor), over TLS
    /// when the app serves HTTPS (the options' tls is set for the caller).
    sse_reader sse(std::string target, sse_options options = {}) const;
    /// Opens a WebSocket at `target` on this server (ws_client's constructor), wss when the
    /// app serves HTTPS (the options' tls is set for the caller).
    ws_client ws(std::string target, ws_options options = {}) const;
    /// The running app.
    tern::app& app() const noexcept;
    /// Stops the app now (the destructor then does nothing more).
    void stop();

private:
    // True when the app serves HTTPS (its settings hold a tls_config).
    bool serves_tls() const noexcept;

    tern::app& app_;
};

/// Javalin's JavalinTest.test: starts `app`, calls `fn` with the server and a client, and
/// stops the app when `fn` returns or throws (the exception goes on to the caller).
void test(tern::app& app, const std::function<void(server&, client&)>& fn);

}  // namespace tern::testing

#pragma once
/// @file client.hpp
/// An HTTP/1.1 client for handlers that call other services (docs/client.md): from a
/// coroutine handler with `co_await`, from a deferred response with a callback, or from the
/// blocking pool (or any thread that is not an event loop) as a plain call. On an event loop
/// it holds no thread while it waits: its sockets are watched by the handler's own loop.
/// Connections are kept alive and reused per origin; HTTPS verifies the server's certificate
/// and name by default.
///
///     tern::client upstream;
///     app.get("/weather", [&](tern::context& ctx) -> tern::task {
///         auto res = co_await upstream.get("http://127.0.0.1:9000/today");
///         ctx.status(res.status).text(res.body);
///     });

#include <tern/body_reader.hpp>
#include <tern/deferred.hpp>
#include <tern/export.hpp>
#include <tern/task.hpp>

#include <chrono>
#include <coroutine>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tern {

/// Why a call failed.
enum class client_failure {
    none,
    bad_request,         ///< the URL or a header cannot be sent (nothing was sent)
    resolve_failed,      ///< the host name has no address
    connect_failed,      ///< no address accepted the connection
    tls_failed,          ///< the TLS handshake failed: verification, protocol
    timed_out,           ///< a phase's timeout passed (message says which)
    bad_response,        ///< the response broke HTTP/1.1's rules
    response_too_large,  ///< the head or the body passed its limit
    closed_early,        ///< the server closed the connection before the response ended
    aborted,             ///< the body's sink returned false
    cancelled,           ///< the client of the handler left, or the server is stopping
    body_stream_short,   ///< `client_request::body_stream` ended before `body_stream_size`
                         ///< bytes (the upstream connection is closed, the request cut)
};

/// What a failed call throws (`co_await`, `fetch_blocking`); the callback form hands it over
/// in `client_result`.
class TERN_API client_error : public std::runtime_error {
public:
    /// A failure `why`, with `message` naming the phase and the origin.
    client_error(client_failure why, const std::string& message)
        : std::runtime_error(message), why_(why) {}
    /// Why the call failed.
    client_failure why() const noexcept { return why_; }

private:
    client_failure why_;
};

/// Settings of one client (all its calls and connections).
struct client_options {
    /// To open a connection: the TCP connect and, for https, the TLS handshake.
    std::chrono::milliseconds connect_timeout{5'000};
    /// With no progress while sending the request.
    std::chrono::milliseconds write_timeout{30'000};
    /// From the request sent to the response's head complete.
    std::chrono::milliseconds response_timeout{30'000};
    /// With no byte of the body arriving.
    std::chrono::milliseconds read_timeout{30'000};
    /// The whole call, retries and redirects included (zero: no bound but the phases').
    std::chrono::milliseconds total_timeout{0};
    /// The response's status line, in bytes.
    std::size_t max_response_line = 8 * 1024;
    /// The response's header block, in bytes (counted as the server's request parser does).
    std::size_t max_response_header_size = 64 * 1024;
    /// The response's header fields.
    std::size_t max_response_headers = 100;
    /// The response body, kept or streamed to `client_request::on_body` (a body passed on by
    /// `client::relay` does not count: `relay_options::max_body` bounds it).
    std::uint64_t max_response_body = std::uint64_t{64} * 1024 * 1024;
    /// Idle connections kept per origin (scheme, host, port).
    std::size_t max_idle_per_origin = 32;
    /// How long an idle connection is kept.
    std::chrono::milliseconds idle_timeout{30'000};
    /// HTTPS: verify the server's certificate chain and name (on by default). Off is for
    /// tests only: anybody on the path can then read and change the traffic.
    bool verify_peer = true;
    /// HTTPS: the trusted CAs, as a PEM file; empty: the system's (/etc/ssl/certs).
    std::string ca_file;
    /// Redirects (301, 302, 303, 307, 308) followed per call; 0: none, the 3xx is returned.
    int max_redirects = 0;
};

/// One response.
struct TERN_API client_response {
    /// The final status (interim 1xx responses are read and dropped).
    int status = 0;
    /// The reason phrase as sent ("OK"), possibly empty.
    std::string reason;
    /// In order received; names as the server sent them.
    std::vector<std::pair<std::string, std::string>> headers;
    std::string body;  ///< empty when it went to `on_body`
    /// The first field named `name` (case-insensitive).
    std::optional<std::string_view> header(std::string_view name) const noexcept;
};

/// One request. `url` is absolute: `http://host[:port]/path?query` or `https://...`.
struct client_request {
    /// Any method token.
    std::string method = "GET";
    /// Absolute, `http://` or `https://` (`[v6]` for an IPv6 address); a fragment is dropped.
    std::string url{};
    /// Sent as given after Host (which tern writes from the URL unless given here);
    /// Content-Length and Transfer-Encoding are tern's to write. A name or value with CR, LF
    /// or NUL is refused (bad_request) before anything is sent.
    std::vector<std::pair<std::string, std::string>> headers{};
    /// The body (Content-Length is written from its size plus a file body's).
    std::string body{};
    /// A file sent as the body after `body` (a spooled upload passing through): its size is
    /// taken when the call starts, and it is read in pieces, never whole.
    std::string body_file{};
    /// As `body_file`, an open descriptor of a regular file (`ctx.body_fd()`, a spooled
    /// upload, whose file has no name); read with pread(2) from offset 0, never closed by
    /// the client. -1: none. Not with `body_file`.
    int body_fd = -1;
    /// The body taken piece by piece from a reader (`ctx.body_reader()` of a
    /// `tern::streamed_body` route, or any `body_reader`), sent after `body`. The next piece
    /// is asked for only once the last one is written to the upstream's socket, so a slow
    /// upstream stops the reads from the reader's client. Loop thread only, as the reader:
    /// `co_await fetch`, `fetch(reply, ...)` and `relay`; `fetch_blocking` refuses it
    /// (bad_request), and so does a request with `body_file` or `body_fd`. A reader failure
    /// ends the call and closes its connection: `client_left` and `stopped` are `cancelled`,
    /// `idle` is `timed_out`, `too_large` is `bad_request`. Once a piece was taken, a closed
    /// connection is not retried and a redirect that would send the body again is returned,
    /// not followed. std::nullopt: none.
    std::optional<body_reader> body_stream{};
    /// With `body_stream`: its size in bytes, sent as `Content-Length: body.size() + size`; a
    /// reader that gives more fails the call (`bad_request`), one that ends with fewer fails it
    /// (`body_stream_short`), the upstream connection closed either way. std::nullopt: the
    /// body is sent chunked (`Transfer-Encoding: chunked`).
    std::optional<std::uint64_t> body_stream_size{};
    /// When set, runs once the final head has arrived (status, reason and headers of the
    /// response it is given; body empty), before any body byte: a proxy's moment to send its
    /// own head. Returning false ends the call (`aborted`).
    std::function<bool(const client_response&)> on_head{};
    /// When set, body bytes go here as they arrive (on the calling loop or thread) instead
    /// of into `client_response::body`; returning false ends the call (`aborted`).
    std::function<bool(std::string_view)> on_body{};
    /// Flow control for `on_body`, for a sink slower than the server (a proxy passing the
    /// body on to its own client): called after each piece `on_body` took. Return true to
    /// read on; or keep `resume` and return false, and the call reads nothing more until
    /// `resume()` is called: on the call's loop for `co_await` and callbacks, from any thread
    /// for `fetch_blocking`. A `resume` dropped uncalled ends the call (`cancelled`). The
    /// read timeout does not run while paused; what the last read brought is still handed
    /// to `on_body` (at most 16 KiB).
    std::function<bool(std::function<void()> resume)> pace{};
};

/// What the callback form receives: a response, or the failure.
struct client_result {
    /// The response (empty after a failure).
    client_response response;
    /// Why it failed; `none` when it did not.
    client_failure failure = client_failure::none;
    std::string message;  ///< why it failed, for logs
    /// True when the call did not fail (whatever the status).
    explicit operator bool() const noexcept { return failure == client_failure::none; }
};

/// How `client::relay` passes an upstream's answer on.
struct relay_options {
    /// Response fields not passed on (case-insensitive), besides those that never are: the
    /// hop-by-hop ones (Connection, Keep-Alive, Proxy-Connection, TE, Trailer,
    /// Transfer-Encoding, Upgrade, and any the response's Connection names) and
    /// Content-Length (the relayed body is tern's to frame).
    std::vector<std::string> drop_headers{};
    /// Body bytes held while the handler's answer is not yet open (it opens on the
    /// response's loop just after the head); past this the upstream is not read on.
    std::size_t buffer = 64 * 1024;
    /// The relayed body's bound in bytes (`client_options::max_response_body` does not apply
    /// to a relay). 0: none, a proxy's default. When set, a Content-Length over it fails the
    /// call before the head is passed on (`response_too_large`, `done(result, false)`: the
    /// reply is still open for a 502), and a body without one that passes it aborts the
    /// stream (the client sees a cut body).
    std::uint64_t max_body = 0;
};

namespace detail {
struct client_shared;
class client_call;
/// Runs `call` on the loop of the coroutine `h`, then resumes `h` there (or destroys it when
/// that loop has ended first).
TERN_API void await_client_call(const std::shared_ptr<client_call>& call,
                                std::coroutine_handle<task::promise_type> h);
/// The call's outcome, once it has ended.
TERN_API client_result take_client_result(client_call& call);
}  // namespace detail

/// The awaitable `co_await client.fetch(...)` returns: the response, or it throws
/// client_error.
class client_awaitable {
public:
    /// Made by `client::get` and `client::fetch`.
    explicit client_awaitable(std::shared_ptr<detail::client_call> call) noexcept
        : call_(std::move(call)) {}
    /// Always suspends: the call starts on the coroutine's loop.
    bool await_ready() const noexcept { return false; }
    /// Starts the call; the coroutine resumes on its loop when it ends.
    void await_suspend(std::coroutine_handle<task::promise_type> h) {
        detail::await_client_call(call_, h);
    }
    /// The response; throws client_error when the call failed.
    client_response await_resume() {
        auto r = detail::take_client_result(*call_);
        if (!r) throw client_error(r.failure, r.message);
        return std::move(r.response);
    }

private:
    std::shared_ptr<detail::client_call> call_;
};

/// An HTTP/1.1 client. Copies share their connections and settings; any thread.
class TERN_API client {
public:
    /// A client with `options`; no connection is made before the first call.
    explicit client(client_options options = {});

    /// In a coroutine handler: `auto res = co_await upstream.get(url);`. Throws
    /// client_error when the call fails (unhandled: 500, like any exception).
    client_awaitable get(std::string url) const;
    /// In a coroutine handler, any request: `co_await upstream.fetch(request)`, with the
    /// request in a variable (it is copied). Throws client_error when the call fails.
    client_awaitable fetch(const client_request& request) const;
    /// Deleted on purpose: GCC 12 miscompiles an aggregate temporary with string members
    /// inside a `co_await` expression (`co_await c.fetch({.url = u})` frees its strings
    /// twice), so a request for `co_await` must be named first (docs/client.md).
    client_awaitable fetch(client_request&& request) const = delete;
    /// With a deferred response: `done(result)` runs on the response's loop when the call
    /// ends, failed or not (cancelled when the handler's client left).
    void fetch(const deferred& reply, client_request request,
               std::function<void(client_result)> done) const;
    /// A reverse proxy's step: sends `request` and relays the answer into `reply` as it
    /// arrives, its status and end-to-end fields, then its body as a response stream read
    /// from the upstream only as fast as the handler's client takes it (docs/client.md).
    /// `request`'s `on_head`, `on_body` and `pace` are the relay's own and must be empty
    /// (std::invalid_argument). `done(result, relayed)` runs once on the response's loop
    /// when the call ends: `relayed` true when the head was passed on (a failure after it
    /// aborts the stream, so the client sees a cut body); false when the call failed first,
    /// and `reply` is still open for `done` to complete (a 502 or 504, another upstream).
    void relay(const deferred& reply, client_request request,
               std::function<void(const client_result& result, bool relayed)> done,
               relay_options options = {}) const;
    /// On the calling thread, which it blocks (a `tern::blocking` handler, the blocking
    /// pool, a program's own thread; never an event loop's). Throws client_error; a request
    /// with a `body_stream` (loop thread only) is refused with `bad_request`.
    client_response fetch_blocking(client_request request) const;

    /// Idle connections kept now, over all origins (for tests and metrics).
    std::size_t idle_connections() const;

private:
    std::shared_ptr<detail::client_shared> shared_;
};

/// Describes `why` in a few words ("timed out").
TERN_API std::string_view describe(client_failure why) noexcept;

}  // namespace tern

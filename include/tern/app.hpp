#pragma once
/// @file app.hpp
/// The server: routes, settings, and its lifecycle.

#include <tern/config.hpp>
#include <tern/context.hpp>
#include <tern/detail/exception_mapper.hpp>
#include <tern/export.hpp>
#include <tern/http_error.hpp>
#include <tern/sse.hpp>
#include <tern/stats.hpp>
#include <tern/task.hpp>
#include <tern/websocket.hpp>

#include <chrono>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <typeinfo>
#include <utility>
#include <vector>

namespace tern {

namespace detail {
class server;
struct repeating_state;
}  // namespace detail

class group;
class api_doc;
struct openapi_info;

namespace detail {
/// A handler marked as reading its request body itself (tern::streamed_body), as the
/// `handler` a route_handler holds; app::add takes the handler out of it again. A mark in
/// the handler, not a field of route_handler, keeps route_handler's layout (0.2's ABI).
struct streamed_route {
    handler inner;
    void operator()(context& ctx) const { inner(ctx); }
};
}  // namespace detail

/// What a route accepts: a plain handler (`void(context&)`), or a coroutine handler
/// (`task(context&)`, docs/async.md), which tern starts after `ctx.defer()`.
class route_handler {
public:
    /// A plain handler (a lambda, a function, a `tern::handler`, `tern::blocking(...)`).
    template <class F>
    requires(!detail::coroutine_handler<F> && std::is_constructible_v<handler, F>)
        route_handler(F f)
        : fn_(std::move(f)) {}  // NOLINT(google-explicit-constructor)
    /// A coroutine handler.
    template <detail::coroutine_handler F>
    route_handler(F f)  // NOLINT(google-explicit-constructor)
        : fn_(detail::coroutine_route(std::function<task(context&)>(std::move(f)))),
          coroutine_(true) {}

    /// The handler to store.
    handler take() && { return std::move(fn_); }
    /// Whether it was a coroutine handler.
    bool is_coroutine() const noexcept { return coroutine_; }
    /// The route's own request body limit (0: limits_config::max_body_size); see body_limit().
    std::size_t body_limit() const noexcept { return body_limit_; }
    /// Sets it (see tern::body_limit).
    route_handler& body_limit(std::size_t bytes) noexcept {
        body_limit_ = bytes;
        return *this;
    }
    /// Whether the handler reads the request body itself, piece by piece (see
    /// tern::streamed_body); false by default.
    bool streamed_body() const noexcept { return fn_.target<detail::streamed_route>() != nullptr; }
    /// Sets it.
    route_handler& streamed_body(bool on) {
        if (on == streamed_body()) return *this;
        if (on) {
            fn_ = handler(detail::streamed_route{std::move(fn_)});
        } else {
            handler inner = std::move(fn_.target<detail::streamed_route>()->inner);
            fn_ = std::move(inner);
        }
        return *this;
    }
    /// What the route says about itself in the OpenAPI document (see tern::documented in
    /// <tern/openapi.hpp>); null: nothing.
    const std::shared_ptr<const api_doc>& doc() const noexcept { return doc_; }
    /// Sets it.
    route_handler& doc(std::shared_ptr<const api_doc> d) noexcept {
        doc_ = std::move(d);
        return *this;
    }

private:
    handler fn_;
    bool coroutine_ = false;
    std::size_t body_limit_ = 0;
    std::shared_ptr<const api_doc> doc_;
};

/// A route with its own limit on request bodies, above or below `limits_config::max_body_size`
/// (an upload route that takes 1 GiB while the rest of the app keeps 1 MiB): over it, 413
/// (from the Content-Length before any body byte is read, or as soon as a chunked body
/// passes it). Bodies over `spool_config::body_above` go to a temporary file, not memory.
///
///     app.post("/upload", tern::body_limit(std::size_t{1} << 30, handle_upload));
template <class F>
route_handler body_limit(std::size_t max_bytes, F f) {
    route_handler r(std::move(f));
    r.body_limit(max_bytes == 0 ? 1 : max_bytes);
    return r;
}

/// A route whose handler reads the request body itself, piece by piece as it arrives, with
/// `ctx.body_reader()` (docs/uploads.md): the handler runs once the head is complete, before
/// any body byte is read, and no body byte is read from the network until it asks. The
/// route's body limit still counts (a Content-Length over it: 413 before the handler runs;
/// a chunked body passing it: `body_failure::too_large` and 413). The handler must answer
/// on the event loop: a coroutine handler, or a plain one that calls `ctx.defer()` and
/// reads with `next`'s callback form. Over HTTP/2 and HTTP/3 the body is read whole first
/// for now and handed over as one piece. Composes with tern::body_limit in either order.
///
///     app.post("/upload", tern::streamed_body(handle_upload));
template <class F>
route_handler streamed_body(F f) {
    route_handler r(std::move(f));
    r.streamed_body(true);
    return r;
}

/// Marks a route handler as blocking: it runs on the app's blocking pool
/// (`app::blocking_threads`), not on the event loop, so a slow database call or a sleep in
/// it does not hold up the other connections of its thread. Before filters run first on the
/// event loop; the handler (and the exception mapper of what it throws) on a pool thread;
/// after filters, error handlers and the request logger back on the event loop, and the
/// response is written there. Only route handlers are run on the pool; a filter or error
/// handler wrapped in it runs where it would have run anyway.
///
///     app.get("/report", tern::blocking([](tern::context& ctx) { ctx.text(slow_query()); }));
TERN_API handler blocking(handler h);

/// The header a reverse proxy writes the client's address into (`app::trusted_proxies`):
/// only that one is read, since a proxy passes the other through as the client sent it.
enum class forwarding_header {
    x_forwarded_for,  ///< `X-Forwarded-For` (nginx, HAProxy, AWS ELB, Go's and Express's default)
    forwarded,        ///< `Forwarded: for=` (RFC 7239), for proxies set up to append to it
};

/// A repeating task started by app::every; cancel() stops it (any thread, idempotent).
/// Copies refer to the same task; dropping every copy does not cancel it (docs/loop-work.md).
class TERN_API repeating_task {
public:
    /// An empty handle: refers to no task, is never active, and its cancel() does nothing.
    repeating_task() = default;  // cancels nothing
    /// No run starts after it returns, unless one is under way (cancel() does not wait for
    /// it; called from the task itself, the run that called it is the last). Any thread.
    void cancel() noexcept;
    /// Scheduled and not cancelled, and the app not stopped (false for an empty handle).
    bool active() const noexcept;

private:
    friend class app;
    explicit repeating_task(std::shared_ptr<detail::repeating_state> s) : state_(std::move(s)) {}
    std::shared_ptr<detail::repeating_state> state_;
};

/// An HTTP/1.1 server. Register routes and settings, then `listen` (blocks) or `start`
/// (returns). Routes and settings are fixed once the server starts: changing them then
/// throws std::logic_error. Route patterns: `{name}` matches one path segment, `<name>`
/// (last segment only) the rest of the path including slashes, `*` one segment, or the rest
/// of the path as the last segment; a trailing slash is ignored. A bad pattern or a route
/// registered twice throws std::invalid_argument (see docs/routing.md).
class TERN_API app {
public:
    /// A server with the default settings (see tern::config).
    app();
    /// A server with the given settings.
    explicit app(config settings);
    /// Stops the server if it is running (as `stop()`).
    ~app();
    app(const app&) = delete;
    app& operator=(const app&) = delete;

    // ---- routes ----------------------------------------------------------------------

    /// Adds a handler for GET (and so HEAD) requests matching `pattern`.
    app& get(std::string_view pattern, route_handler h);
    /// Adds a handler for POST requests matching `pattern`.
    app& post(std::string_view pattern, route_handler h);
    /// Adds a handler for PUT requests matching `pattern`.
    app& put(std::string_view pattern, route_handler h);
    /// Adds a handler for PATCH requests matching `pattern`.
    app& patch(std::string_view pattern, route_handler h);
    /// Adds a handler for DELETE requests matching `pattern`.
    app& del(std::string_view pattern, route_handler h);
    /// Adds a handler for HEAD requests, overriding the automatic HEAD from GET.
    app& head(std::string_view pattern, route_handler h);
    /// Adds a handler for OPTIONS requests, overriding the automatic 204 + Allow.
    app& options(std::string_view pattern, route_handler h);
    /// Serves Server-Sent Events at `pattern` (GET): `h` is called once per connecting client
    /// with the request's context and the client's handle (docs/sse.md).
    app& sse(std::string_view pattern, sse_handler h);
    /// Serves WebSocket connections at `pattern` (a GET route: before filters run on the
    /// upgrade request and may refuse it): `setup` fills the route's handlers once, now
    /// (docs/websocket.md).
    app& ws(std::string_view pattern, const ws_setup& setup);
    /// Adds a handler for `method` (an RFC 9110 token, e.g. "PROPFIND"), case-sensitive.
    /// Throws std::invalid_argument for an empty or malformed method.
    app& add(std::string_view method, std::string_view pattern, route_handler route);
    /// Registers routes and filters under `prefix` (e.g. "/api"): `fn` receives a
    /// tern::group whose patterns are relative to the prefix (see docs/routing.md).
    app& group(std::string_view prefix, const std::function<void(tern::group&)>& fn);

    // ---- filters and errors (see docs/errors.md) --------------------------------------

    /// Runs `h` before the handler of every request (static files and 404s included), in
    /// the order filters were added. A filter ends the request (the remaining before
    /// filters and the handler are skipped; after filters still run) by throwing, by
    /// setting a result (`text`, `json`, `redirect`...) or by `ctx.skip_remaining()`.
    app& before(handler h);
    /// Runs `h` before the handler of requests whose path matches `pattern` (route grammar;
    /// a final `*` matches the rest of the path).
    app& before(std::string_view pattern, handler h);
    /// Runs `h` after the handler of every request, even when the handler or a before
    /// filter threw (the response then holds the mapped error).
    app& after(handler h);
    /// Runs `h` after the handler of requests whose path matches `pattern`.
    app& after(std::string_view pattern, handler h);
    /// Filters and error handlers are not coroutines: only route handlers may suspend.
    template <detail::coroutine_handler F>
    app& before(F) = delete;
    /// Not a coroutine (see `before`).
    template <detail::coroutine_handler F>
    app& before(std::string_view, F) = delete;
    /// Not a coroutine (see `before`).
    template <detail::coroutine_handler F>
    app& after(F) = delete;
    /// Not a coroutine (see `before`).
    template <detail::coroutine_handler F>
    app& after(std::string_view, F) = delete;
    /// Maps exceptions of type E (and types derived from it) escaping a filter or handler:
    /// `fn(E&, context&)` sets the response. When several mappers match, the one for the
    /// most derived type wins. http_error and its subclasses are answered by tern unless a
    /// mapper names http_error or a type derived from it.
    template <class E, class F>
    app& exception(F fn) {
        static_assert(std::is_class_v<E>, "tern: exception<E> maps class types");
        static_assert(std::is_invocable_v<const F&, E&, context&>,
                      "tern: an exception mapper is callable as fn(E&, tern::context&)");
        return add_exception_mapper(detail::make_exception_mapper<E>(std::move(fn)));
    }
    /// Runs `h` to shape every response with `status` whose body tern made: 404 and 405
    /// from routing, a thrown http_error, limits such as 413 and 431, or a status the
    /// handler set without a body. `ctx.result()` holds tern's message. Responses whose body
    /// the application set are left alone. Throws std::invalid_argument outside 400..599.
    app& error(int status, handler h);
    /// Not a coroutine (see `before`).
    template <detail::coroutine_handler F>
    app& error(int, F) = delete;
    /// Calls `fn` once per request when its response is final (see tern::access_log for a
    /// ready one). Each call adds a logger: several run in registration order (an access log
    /// and a metrics sink, say), and one that throws does not stop the next. Off by default,
    /// and free when off. Throws std::invalid_argument for an empty `fn`.
    app& request_logger(log_handler fn);

    // ---- operations --------------------------------------------------------------------

    /// Serves the server's counters at GET `path` in the Prometheus text format 0.0.4
    /// (docs/metrics.md): requests by method and status class, a latency histogram, requests
    /// in flight, connections, bytes, the blocking queue. An ordinary route, answered on the
    /// event loop. Off by default; requests are counted only when it is on. Throws
    /// std::invalid_argument for a bad or already routed path (as `get`).
    app& metrics(std::string_view path = "/metrics");
    /// Serves an OpenAPI 3.1 document of the app's routes at `path` (GET, JSON), built
    /// from the route table when it is first asked for (docs/openapi.md): every route of a
    /// method OpenAPI knows, with what `tern::documented` attached, or else its path
    /// parameters. Throws std::invalid_argument for a bad or already routed path (as `get`).
    app& openapi(std::string_view path = "/openapi.json");
    /// The same with the document's title, version and top-level fields (<tern/openapi.hpp>).
    app& openapi(std::string_view path, const openapi_info& info);
    /// Serves Swagger UI at `path` (a page, and its script and style under `path`/) showing
    /// the document at `document_path`. Its files are the copy of npm's `swagger-ui-dist`
    /// tern was built with and installs; `assets_directory` (when not empty) names another
    /// directory holding `swagger-ui-bundle.js` and `swagger-ui.css`. Throws
    /// std::runtime_error when there are no such files, std::invalid_argument for a bad or
    /// already routed path.
    app& swagger_ui(std::string_view path = "/docs",
                    std::string_view document_path = "/openapi.json",
                    std::string assets_directory = {});
    /// Gives every request an id (docs/logging.md): the value of request header `header`
    /// when it is 1..128 letters, digits and a few punctuation characters (no space, quote,
    /// comma or control character), else a new unique one (a per-thread random prefix and a
    /// counter). `ctx.request_id()` reads it, every
    /// response carries it back in `header` (errors too) and `tern::access_log()` writes it.
    /// Off by default; an empty `header` turns it off. Throws std::invalid_argument for a
    /// header name that is not a token.
    app& request_ids(std::string_view header = "X-Request-Id");
    /// The reverse proxies whose forwarding header is believed (docs/proxies.md): addresses
    /// and CIDR ranges, IPv4 and IPv6 ("127.0.0.1", "10.0.0.0/8", "::1", "fd00::/8"), and
    /// "unix" for a proxy reaching `listen_unix` over a Unix domain socket; `header` is the
    /// one they write (default `X-Forwarded-For`, what nginx's `$proxy_add_x_forwarded_for`
    /// appends to). A request from one of them gets the client's address in `ctx.ip()`, read
    /// from the right of that header; the other header is never read (a proxy passes the
    /// client's own copy through), nor are others' headers. Empty (the default): `ctx.ip()`
    /// is the peer. Throws std::invalid_argument naming a bad entry.
    app& trusted_proxies(const std::vector<std::string>& entries,
                         forwarding_header header = forwarding_header::x_forwarded_for);

    // ---- response features -------------------------------------------------------------

    /// Answers CORS preflights and adds CORS headers to responses (see docs/cors.md).
    /// Throws std::invalid_argument for an inconsistent configuration.
    app& cors(cors_config settings);
    /// Turns on sessions (`ctx.session()`, docs/sessions.md) with `settings`: an HttpOnly,
    /// SameSite=Lax cookie carrying a random 256-bit id, sessions in memory unless
    /// `settings.store` is set. Throws std::invalid_argument for a bad setting (a cookie
    /// name that is not a token, a timeout not above zero, SameSite=None without Secure).
    app& sessions(session_config settings = {});
    /// The secret that signs cookies (`ctx.set_signed_cookie`, `ctx.signed_cookie`):
    /// at least 32 random bytes, kept out of the source. Throws std::invalid_argument for a
    /// shorter one.
    app& cookie_secret(std::string_view key);
    /// gzip-compresses responses the client accepts compressed (see docs/compression.md).
    app& compression(compression_config settings = {});
    /// Serves HTTPS instead of plain HTTP on the listener (see docs/tls.md). The files are
    /// read at `start`/`listen`, which throw std::invalid_argument naming a bad one. Throws
    /// std::invalid_argument for settings without a certificate, or with a certificate
    /// that names both or neither of a file and PEM text.
    app& tls(tls_config settings);
    /// HTTPS with one certificate chain and key, from PEM files.
    app& tls(std::string cert_file, std::string key_file);
    /// Re-reads the TLS certificates while serving: connections accepted from now on use
    /// the new ones, open connections keep theirs. Throws std::invalid_argument (the old
    /// certificates stay) when they cannot be loaded, std::logic_error when not running or
    /// without TLS. `listen` does this on SIGHUP.
    void reload_tls();

    // ---- settings (see tern::config for defaults) -----------------------------------
    //
    // One door per setting: `configure` reaches every field of tern::config in place; `limits`
    // and `timeouts` set a whole group (the fields not named take their defaults; designated
    // initializers follow the order of declaration); a few one-field setters remain for what
    // most programs change. The other one-field setters of 0.1 are deprecated and go in 0.4
    // (docs/versioning.md).

    /// Every limit at once (`config::limits`, docs/limits.md), e.g.
    /// `app.limits({.max_body_size = 1 << 20, .max_json_depth = 64})`: the fields not named
    /// take their defaults. Throws std::invalid_argument for a value the one-field setters
    /// below refuse.
    app& limits(limits_config settings);
    /// Every timeout at once (`config::timeouts`, docs/limits.md), e.g.
    /// `app.timeouts({.header = 5s, .keep_alive = 30s})`. Throws std::invalid_argument for a
    /// negative one.
    app& timeouts(timeouts_config settings);
    /// Worker threads; 0 means one per hardware thread.
    app& threads(unsigned n);
    /// Limit on open connections. Throws std::invalid_argument for 0.
    app& max_concurrent_connections(std::size_t n);
    /// Limit on request body bytes. 0 refuses every non-empty body.
    app& max_body_size(std::size_t bytes);
    /// Serve HTTP/2: `h2` by ALPN over HTTPS, h2c with prior knowledge (default on).
    app& http2(bool on);
    /// Also serves HTTP/3 over QUIC on UDP `port` of the listener's host, with the first
    /// certificate given to `tls` (its files; docs/http3.md); 0: none (the default). The same
    /// routes answer, and HTTPS answers carry `Alt-Svc: h3=":port"`. `start`/`listen` throw
    /// std::invalid_argument when there is no `tls`, when that certificate is PEM text or its
    /// key has a password, with `listen_fd`/`listen_unix`, or when tern was built without
    /// HTTP/3 (`-DTERN_HTTP3=OFF`); std::runtime_error when its libraries cannot be loaded.
    app& http3(std::uint16_t port);
    /// Sends file bodies with `sendfile(2)` instead of through a buffer (default off); see
    /// config::sendfile.
    app& sendfile(bool on);
    /// Expects a PROXY protocol header (v1 or v2) on every connection; see
    /// config::proxy_protocol. Off by default.
    app& proxy_protocol(bool on);
    /// Readiness and liveness routes (GET, `/ready` and `/live` by default) and a grace
    /// period at stop while readiness answers 503 (docs/deploy.md); see tern::health_config.
    /// Throws std::invalid_argument for a path that does not start with '/'.
    app& health(health_config settings = {});
    /// Changes any settings in place, e.g.
    /// `app.configure([](tern::config& c) { c.blocking.max_queue = 64; c.spool.directory =
    /// "/srv/tmp"; })`: `change` gets the current settings and the fields it does not touch keep
    /// their values (unlike `limits({...})`, which sets the whole group). The result is checked as
    /// `app(config)` checks it: std::invalid_argument names the first bad field
    /// (`tern: limits.max_line_size must be at least 16`) and nothing changes.
    app& configure(const std::function<void(config&)>& change);

    // ---- deprecated one-field setters (0.2; removed in 0.4) --------------------------

    /// Threads of the pool for `tern::blocking` handlers. Throws std::invalid_argument for 0.
    [[deprecated(
        "use app.configure([](tern::config& c) { c.blocking.threads = ...; }); removed in "
        "0.4")]] app&
    blocking_threads(unsigned n);
    /// Requests that may wait for a blocking-pool thread (default 4096); one more gets 503 +
    /// Retry-After: 1. Throws std::invalid_argument for 0.
    [[deprecated(
        "use app.configure([](tern::config& c) { c.blocking.max_queue = ...; }); removed in "
        "0.4")]] app&
    max_blocking_queue(std::size_t n);
    /// How long a request may wait for a blocking-pool thread (default 5 s; zero: no bound);
    /// one taken after waiting longer gets 503 + Retry-After: 1 instead of running. Throws
    /// std::invalid_argument when negative.
    [[deprecated(
        "use app.configure([](tern::config& c) { c.blocking.max_wait = ...; }); removed in "
        "0.4")]] app&
    max_blocking_wait(std::chrono::milliseconds wait);
    /// Bodies over `bytes` go to a temporary file in `spool_directory` (default 1 MiB; 0:
    /// none); see spool_config::body_above and docs/uploads.md.
    [[deprecated(
        "use app.configure([](tern::config& c) { c.spool.body_above = ...; }); removed in "
        "0.4")]] app&
    spool_body_above(std::size_t bytes);
    /// Where spooled bodies go (default $TMPDIR, else /tmp); give it its own file system.
    [[deprecated(
        "use app.configure([](tern::config& c) { c.spool.directory = ...; }); removed in "
        "0.4")]] app&
    spool_directory(std::string directory);
    /// Bytes all spooled bodies may hold at once (default 1 GiB; 0: no bound); a body that
    /// would pass it is answered 503 + Retry-After. See spool_config::max_bytes.
    [[deprecated(
        "use app.configure([](tern::config& c) { c.spool.max_bytes = ...; }); removed in "
        "0.4")]] app&
    max_spooled_bytes(std::uint64_t bytes);
    /// Limit on header fields per request. Throws std::invalid_argument for 0.
    [[deprecated(
        "use app.configure([](tern::config& c) { c.limits.max_header_count = ...; }); removed in "
        "0.4")]] app&
    max_header_count(std::size_t n);
    /// Limit on all header bytes of a request. Throws std::invalid_argument for 0.
    [[deprecated(
        "use app.configure([](tern::config& c) { c.limits.max_header_size = ...; }); removed in "
        "0.4")]] app&
    max_header_size(std::size_t bytes);
    /// Limit on the request line's bytes. Throws std::invalid_argument below 16.
    [[deprecated(
        "use app.configure([](tern::config& c) { c.limits.max_line_size = ...; }); removed in "
        "0.4")]] app&
    max_line_size(std::size_t bytes);
    /// Empty lines tolerated before a request line.
    [[deprecated(
        "use app.configure([](tern::config& c) { c.limits.max_empty_lines = ...; }); removed in "
        "0.4")]] app&
    max_empty_lines(std::size_t n);
    /// Requests served on one connection before it closes; 0 (the default) is unlimited.
    [[deprecated(
        "use app.configure([](tern::config& c) { c.limits.max_requests_per_connection = ...; }); "
        "removed in 0.4")]] app&
    max_requests_per_connection(std::size_t n);
    /// Limit on the bytes of one uploaded file in a multipart/form-data body (413 over it).
    [[deprecated(
        "use app.configure([](tern::config& c) { c.limits.max_upload_file_size = ...; }); removed "
        "in 0.4")]] app&
    max_upload_file_size(std::size_t bytes);
    /// Limit on a request body `body_as` parses as JSON (413 over it). Throws
    /// std::invalid_argument for 0.
    [[deprecated(
        "use app.configure([](tern::config& c) { c.limits.max_json_size = ...; }); removed in "
        "0.4")]] app&
    max_json_size(std::size_t bytes);
    /// Limit on the nesting of a JSON body `body_as` parses (400 deeper). Throws
    /// std::invalid_argument for 0.
    [[deprecated(
        "use app.configure([](tern::config& c) { c.limits.max_json_depth = ...; }); removed in "
        "0.4")]] app&
    max_json_depth(std::size_t n);
    /// Bytes a streamed body may queue before `write` returns false (see
    /// `streams_config::buffer_size`). Throws std::invalid_argument for 0.
    [[deprecated(
        "use app.configure([](tern::config& c) { c.streams.buffer_size = ...; }); removed in "
        "0.4")]] app&
    stream_buffer_size(std::size_t bytes);
    /// Bytes a stream may queue at most before it is cut off (see `streams_config::max_buffer`).
    /// Throws std::invalid_argument below `stream_buffer_size`.
    [[deprecated(
        "use app.configure([](tern::config& c) { c.streams.max_buffer = ...; }); removed in "
        "0.4")]] app&
    max_stream_buffer(std::size_t bytes);
    /// Silence after which an SSE stream sends a keep-alive comment; 0: never.
    [[deprecated(
        "use app.configure([](tern::config& c) { c.streams.sse_keep_alive = ...; }); removed in "
        "0.4")]] app&
    sse_keep_alive(std::chrono::milliseconds interval);
    /// The largest WebSocket message a peer may send (see `websocket_config::max_message_size`).
    /// Throws std::invalid_argument for 0.
    [[deprecated(
        "use app.configure([](tern::config& c) { c.websocket.max_message_size = ...; }); removed "
        "in 0.4")]] app&
    ws_max_message_size(std::size_t bytes);
    /// Silence after which a WebSocket connection is pinged; 0: never.
    [[deprecated(
        "use app.configure([](tern::config& c) { c.websocket.ping_interval = ...; }); removed in "
        "0.4")]] app&
    ws_ping_interval(std::chrono::milliseconds interval);
    /// Accept permessage-deflate when a WebSocket client offers it (default off).
    [[deprecated(
        "use app.configure([](tern::config& c) { c.websocket.compression = ...; }); removed in "
        "0.4")]] app&
    ws_compression(bool on);
    /// Streams one HTTP/2 client may have open at once (default 100).
    [[deprecated(
        "use app.configure([](tern::config& c) { c.http2.max_concurrent_streams = ...; }); removed "
        "in 0.4")]] app&
    h2_max_concurrent_streams(std::uint32_t streams);
    /// Response bytes one HTTP/2 connection may hold unsent before no new stream's handler
    /// runs (default 4 MiB; docs/http2.md). Throws std::invalid_argument for 0.
    [[deprecated(
        "use app.configure([](tern::config& c) { c.http2.max_unsent = ...; }); removed in "
        "0.4")]] app&
    h2_max_unsent(std::size_t bytes);
    /// Files one HTTP/2 connection may hold open at once (default 8; docs/http2.md). Throws
    /// std::invalid_argument for 0.
    [[deprecated(
        "use app.configure([](tern::config& c) { c.http2.max_open_files = ...; }); removed in "
        "0.4")]] app&
    h2_max_open_files(std::size_t files);
    /// Bytes of spooled bodies one HTTP/2 connection may hold at once beyond its first
    /// (default 64 MiB; docs/http2.md). Throws std::invalid_argument for 0.
    [[deprecated(
        "use app.configure([](tern::config& c) { c.http2.max_spooled_bytes = ...; }); removed in "
        "0.4")]] app&
    h2_max_spooled_bytes(std::uint64_t bytes);
    /// Serves the files under `directory` at "/" (see docs/static-files.md).
    app& static_files(std::string directory);
    /// Serves a directory as described by `files`.
    app& static_files(static_files_config files);
    /// All settings as they stand.
    const tern::config& settings() const noexcept;

    // ---- lifecycle -------------------------------------------------------------------

    /// Serves on all interfaces at `port`, IPv6 and IPv4 on one dual-stack socket (IPv4
    /// alone where the host has no IPv6), and blocks until `stop()` or SIGINT/SIGTERM. With
    /// TLS, SIGHUP meanwhile reloads the certificates (`reload_tls`; a failure is logged and
    /// the old ones stay). Throws std::system_error when the port cannot be bound.
    void listen(std::uint16_t port);
    /// Serves on `host` at `port`, blocking as `listen(port)`. `host` is an IP address
    /// ("0.0.0.0", "::" for dual-stack, "127.0.0.1") or a name resolved once at start
    /// ("localhost": its first IPv4 address, else its first address); a name that does not
    /// resolve throws std::system_error naming it.
    void listen(const std::string& host, std::uint16_t port);
    /// Starts serving on `host` at `port` (0: any free port, see `port()`) and returns.
    /// Throws std::system_error when the port cannot be bound, std::logic_error if running.
    void start(const std::string& host = "127.0.0.1", std::uint16_t port = 0);
    /// Serves on a listening socket made elsewhere (systemd socket activation, see
    /// `tern::listen_fds()`, or a parent process handing its socket to a successor), blocking
    /// as `listen(port)`. tern does not bind or close it: each thread accepts from a
    /// duplicate, so when this process stops, connections still queued on the socket wait
    /// for the next process that serves it. Throws std::invalid_argument when `fd` is not a
    /// listening TCP or Unix stream socket.
    void listen_fd(int fd);
    /// Starts serving on the listening socket `fd` (as `listen_fd`) and returns.
    void start_fd(int fd);
    /// Serves on a Unix domain socket at `path` (for a proxy on the same host), blocking as
    /// `listen(port)`. The socket file gets `permissions` (default 0660: owner and group)
    /// before anyone can connect, and is removed when the stop closes the listener. A stale
    /// socket file (nothing accepting on it) is replaced; a live one throws std::system_error
    /// (EADDRINUSE), anything else at the path std::invalid_argument. `ctx.ip()` is "unix".
    void listen_unix(const std::string& path, unsigned permissions = 0660);
    /// Starts serving on a Unix domain socket (as `listen_unix`) and returns.
    void start_unix(const std::string& path, unsigned permissions = 0660);
    /// Stops accepting, closes idle connections, lets in-flight requests finish (they get
    /// `Connection: close`) for up to `timeouts.drain`, then closes what remains and joins
    /// the worker threads. With `health`, readiness turns 503 first and the server keeps
    /// serving for `health_config::grace` before it stops accepting (a second `stop()`, or
    /// a second signal, cuts the grace short). Safe to call more than once. Called from a
    /// handler, it only begins the stop; the thread that called `listen` or `start`
    /// finishes it.
    void stop();

    // ---- work on the loops outside a request (see docs/loop-work.md) ------------------

    /// Runs `fn` on one of the app's loops every `interval` (> 0, else std::invalid_argument), the
    /// first run one interval after the app starts (or after this call, when it is running), until
    /// the returned handle is cancelled or the app stops. Runs never overlap; a run that takes
    /// longer than the interval delays the next (no burst to catch up). An exception from `fn` is
    /// logged as handlers' uncaught exceptions are and the task goes on. Callable from any thread,
    /// before or after start. Dropping the handle does not cancel. Every run is on the same
    /// loop, chosen in turn among the loops. Called once a stop has begun (until the next
    /// start), the task never runs (its handle is not active). An empty `fn` throws
    /// std::invalid_argument.
    repeating_task every(std::chrono::milliseconds interval, std::function<void()> fn);
    /// Runs `fn` soon on one of the app's loops (chosen in turn), from any thread. Before start it
    /// waits for the loops; false (and `fn` never runs) once the app has begun to stop (until
    /// the next start). A function not yet started when the stop begins is dropped, not run.
    /// An exception from `fn` is logged. An empty `fn` throws std::invalid_argument.
    bool post(std::function<void()> fn);
    /// Runs `fn` once on every loop (e.g. to update per-loop state); same rules as post.
    bool post_all(std::function<void()> fn);

    /// The bound port once started (useful with port 0); 0 before.
    std::uint16_t port() const noexcept;
    /// With HTTPS and `tls_config::http_port`: the plain-HTTP listener's bound port; 0
    /// otherwise.
    std::uint16_t http_port() const noexcept;
    /// The running server's counters (all zero when not running); see tern::server_stats.
    server_stats stats() const noexcept;

private:
    friend class tern::group;
    app& add_exception_mapper(detail::exception_mapper m);
    app& add_filter(bool before, const std::vector<std::string>& patterns, handler h);
    void start_with(const std::function<void(detail::server&)>& bind);
    // The rest of every listen*(): waits for SIGINT/SIGTERM or stop(), then stops.
    void serve_until_stopped();

    struct impl;
    std::unique_ptr<impl> impl_;
};

/// Routes and filters registered under a path prefix (see `app::group`). Patterns given to
/// a group are relative to its prefix: in `app.group("/api", ...)`, `g.get("/users", h)`
/// serves "/api/users" and `g.get("/", h)` serves "/api".
class TERN_API group {
public:
    /// The routes of `owner` under `prefix`; built by `app::group`.
    group(app& owner, std::string prefix) : app_(owner), prefix_(std::move(prefix)) {}

    /// Adds a GET (and so HEAD) handler under the prefix.
    group& get(std::string_view pattern, route_handler h);
    /// Adds a POST handler under the prefix.
    group& post(std::string_view pattern, route_handler h);
    /// Adds a PUT handler under the prefix.
    group& put(std::string_view pattern, route_handler h);
    /// Adds a PATCH handler under the prefix.
    group& patch(std::string_view pattern, route_handler h);
    /// Adds a DELETE handler under the prefix.
    group& del(std::string_view pattern, route_handler h);
    /// Adds a HEAD handler under the prefix.
    group& head(std::string_view pattern, route_handler h);
    /// Adds an OPTIONS handler under the prefix.
    group& options(std::string_view pattern, route_handler h);
    /// Adds a handler for `method` under the prefix.
    group& add(std::string_view method, std::string_view pattern, route_handler h);
    /// Serves WebSocket connections under the prefix (see `app::ws`).
    group& ws(std::string_view pattern, const ws_setup& setup);
    /// A nested group (a member named `group` would clash with the class name): its prefix
    /// is this group's prefix followed by `prefix`.
    group& subgroup(std::string_view prefix, const std::function<void(tern::group&)>& fn);
    /// A before filter for the prefix itself and every path under it.
    group& before(handler h);
    /// A before filter for `pattern` under the prefix.
    group& before(std::string_view pattern, handler h);
    /// An after filter for the prefix itself and every path under it.
    group& after(handler h);
    /// An after filter for `pattern` under the prefix.
    group& after(std::string_view pattern, handler h);
    /// The full prefix of this group, e.g. "/api/v1".
    const std::string& prefix() const noexcept { return prefix_; }

private:
    std::string full(std::string_view pattern) const;

    app& app_;
    std::string prefix_;
};

/// A request logger writing one access-log line per request to stderr: the client address,
/// time, request line, status, body bytes, Referer, User-Agent and the handling time, e.g.
/// `127.0.0.1 - - [30/Nov/2026:10:00:00 +0000] "GET /a?b=1 HTTP/1.1" 200 12 "-" "curl/7.88"
/// 0.051ms`.
TERN_API log_handler access_log();
/// The same lines, each handed to `sink` (without a trailing newline).
TERN_API log_handler access_log(std::function<void(std::string_view line)> sink);

}  // namespace tern

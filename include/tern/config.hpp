#pragma once
/// @file config.hpp
/// Every setting of a tern server, as plain data with its default beside it.

#include <tern/session_config.hpp>
#include <tern/tls.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace tern {

/// Health endpoints for load balancers and orchestrators (docs/deploy.md). Off unless set
/// with `app::health`.
struct health_config {
    /// Readiness: 200 `ready` while the server takes new work; 503 `unready` once a stop has
    /// begun (and whenever `ready_check` says false). Empty: no readiness route.
    std::string ready_path = "/ready";
    /// Liveness: 200 `live` for as long as the event loops answer, during a stop too.
    /// Empty: no liveness route.
    std::string live_path = "/live";
    /// How long a stop (`app::stop()`, SIGTERM, SIGINT) keeps serving after readiness has
    /// turned 503, before it closes the listener and drains: the balancer's check interval
    /// times its failure threshold, so it stops sending new work first. Meanwhile HTTP/1
    /// responses close their connections and HTTP/2 ones get GOAWAY: pools move elsewhere.
    std::chrono::milliseconds grace{5'000};
    /// Asked on each readiness request when set (on the event loop: keep it quick, e.g. a
    /// flag another thread maintains); false answers 503.
    std::function<bool()> ready_check;
};

/// Cross-origin resource sharing (see docs/cors.md): which other origins' scripts may call
/// this server, and how. Off unless set with `app::cors`.
struct cors_config {
    /// Origins allowed, exactly as browsers send them ("https://app.example.com",
    /// "http://localhost:3000"), compared case-insensitively. "*" (as the only entry) allows
    /// any origin, "null" included; with a list, "null" is allowed only when listed.
    std::vector<std::string> allowed_origins;
    /// Methods a preflight may ask for (simple GET/HEAD/POST are always allowed).
    std::vector<std::string> allowed_methods = {"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"};
    /// Request headers a preflight may ask for (case-insensitive); "*" allows whatever the
    /// preflight asks for, echoing it back.
    std::vector<std::string> allowed_headers = {"*"};
    /// Response headers scripts may read beyond the safelisted ones.
    std::vector<std::string> exposed_headers;
    /// Send `Access-Control-Allow-Credentials: true` (cookies, HTTP auth). Refused together
    /// with the "*" origin: list the origins instead.
    bool allow_credentials = false;
    /// How long a browser may cache a preflight answer; 0 sends no Access-Control-Max-Age.
    std::chrono::seconds max_age{600};
};

/// Compression of response bodies with gzip, br (brotli) or zstd, whichever the client's
/// Accept-Encoding weighs highest, zstd > br > gzip on ties (see docs/compression.md). Off
/// unless set with `app::compression`. A level out of its range makes `app::compression`
/// throw std::invalid_argument.
struct compression_config {
    /// Bodies smaller than this many bytes are sent as they are.
    std::size_t min_size = 1024;
    /// Whole bodies larger than this many bytes are sent as they are too: coding them runs on
    /// the event loop (gzip 6 costs about 27 ms of CPU per MiB of ordinary text,
    /// docs/compression.md), so a few large answers would hold up every other connection of
    /// that loop. Streamed bodies are coded piece by piece and are not limited.
    std::size_t max_size = 256 * 1024;
    /// Streamed bodies (`ctx.stream()`) compressed at once across the server; past it a
    /// streamed body is sent uncompressed. Each holds its coder's state while it lasts
    /// (about 1.8 MiB for zstd, 260 KiB for gzip, 0.3-1.1 MiB for brotli;
    /// docs/compression.md), and one HTTP/2 connection may open many such streams. 0:
    /// streamed bodies are never compressed.
    std::size_t max_streams = 64;
    /// gzip's zlib level, 1 (fastest) to 9 (smallest).
    int level = 6;
    /// Offer gzip (and x-gzip).
    bool gzip = true;
    /// Offer br (brotli, RFC 7932).
    bool brotli = true;
    /// brotli quality, 0 (fastest) to 11 (smallest); 3 costs about 1.5x gzip 6 per response.
    int brotli_level = 3;
    /// Offer zstd (Zstandard, RFC 8878).
    bool zstd = true;
    /// zstd level, 1 (fastest) to 19 (smallest; higher ones need windows browsers refuse).
    int zstd_level = 3;
};

/// One directory served as static files (served by the static-files layer; see
/// docs/static-files.md for what is implemented today).
struct static_files_config {
    std::string hosted_path = "/";  ///< URL prefix the directory is served under.
    std::string directory;          ///< Filesystem directory whose files are served.
    /// File served for a directory request ("/docs/"); empty: directories are always 404.
    std::string index_file = "index.html";
    /// Serve paths with a segment starting with '.' (".env", ".git/"); otherwise they are 404.
    bool allow_dotfiles = false;
    /// Follow symlinks that resolve inside `directory`; ones leading out of it are always 404.
    bool follow_symlinks = true;
    /// Serve a `name.br` / `name.gz` sibling to clients whose Accept-Encoding allows it.
    bool precompressed = true;
    /// Cache-Control value sent with files (200, 206, 304); empty: no Cache-Control.
    std::string cache_control;
    /// Extension (without the dot, any case) -> Content-Type, overriding the built-in table.
    std::map<std::string, std::string> extra_mime_types;
    /// Single-page-application fallback (Javalin's spaRoot): a file relative to `directory`
    /// ("index.html", "app/shell.html") served with 200 for a GET/HEAD under `hosted_path`
    /// that matches no file, when its last path segment has no '.' and its Accept lists
    /// text/html, text/* or */* at q > 0 (docs/static-files.md). Empty: off, such paths are
    /// 404. A path that is not normalized (".." or empty segments, '\\', controls), or a
    /// dotfile while dotfiles are denied, throws std::invalid_argument.
    std::string spa_fallback;
    /// Keep files of up to 16 KiB (with their `.br`/`.gz` siblings) in memory, in each
    /// worker thread at most 64 files and 1 MiB, and answer them without opening them
    /// again: a file changed, replaced or deleted is seen within a second
    /// (docs/static-files.md). false: every request opens the file.
    bool cache_small_files = true;
};

/// What one client may send, each limit with the status it is answered (docs/limits.md).
/// `config::limits`; `app::limits` sets them all, `app::max_body_size` and the other
/// setters one each.
struct limits_config {
    /// Open connections across all threads; one more is answered 503 + Retry-After and closed.
    std::size_t max_concurrent_connections = 10000;
    /// Requests served on one connection; the last gets `Connection: close`. 0: unlimited.
    std::size_t max_requests_per_connection = 0;
    /// Bytes of the request line (method, target, version); more is answered 414 and the
    /// connection closes.
    std::size_t max_line_size = 8 * 1024;
    /// Header fields in one request; more is answered 431 and the connection closes.
    std::size_t max_header_count = 100;
    /// All header bytes of one request together (names, values, separators, line ends);
    /// more is answered 431 and the connection closes.
    std::size_t max_header_size = 8 * 1024;
    /// Empty lines (CRLF) tolerated before a request line; more is answered 400 and the
    /// connection closes.
    std::size_t max_empty_lines = 10;
    /// Request body bytes (after de-chunking); more is answered 413 and the connection closes.
    std::size_t max_body_size = 10 * 1024 * 1024;
    /// Bytes of one uploaded file in a multipart/form-data body; more is answered 413. The
    /// whole body is bounded by max_body_size.
    std::size_t max_upload_file_size = 10 * 1024 * 1024;
    /// Bytes of a request body that `body_as` parses as JSON; more is answered 413 (the
    /// connection stays open). Bounds the parsed document's memory (docs/limits.md).
    std::size_t max_json_size = 1024 * 1024;
    /// Nesting of arrays and objects in a body that `body_as` parses, checked before the
    /// document is built; deeper is answered 400 naming this limit.
    std::size_t max_json_depth = 512;
};

/// How long each phase of a connection may take (docs/limits.md). `config::timeouts`,
/// `app::timeouts`.
struct timeouts_config {
    /// How long a new connection may stay silent before its first byte; then a silent close.
    std::chrono::milliseconds first_byte{10'000};
    /// Total time from a request's first byte to the end of its headers, however the bytes
    /// trickle in (a per-read timer alone lets slowloris win); then 408 + close.
    std::chrono::milliseconds header{10'000};
    /// Longest pause between two reads of a request body; then 408 + close.
    std::chrono::milliseconds body_idle{20'000};
    /// Longest wait for the next request on an idle keep-alive connection; then a silent close.
    std::chrono::milliseconds keep_alive{60'000};
    /// Longest a response write may make no progress (a client that stopped reading); then close.
    std::chrono::milliseconds write{20'000};
    /// How long `stop()` lets in-flight requests finish (running `tern::blocking` handlers
    /// included) before their connections are closed; then `stop()` returns even while a
    /// blocking handler still runs (its result is discarded).
    std::chrono::milliseconds drain{10'000};
};

/// The pool that runs blocking handlers (`tern::blocking`) and coroutines' `on_blocking_pool`
/// work (docs/blocking.md). `config::blocking`.
struct blocking_config {
    /// Threads of the pool that runs blocking handlers (`tern::blocking`) and coroutines'
    /// `on_blocking_pool` work, started as that work needs them (none until then). At most
    /// this many such jobs run at once; the others wait in order (up to `max_queue`).
    unsigned threads = 16;
    /// Requests waiting for a blocking-pool thread (not running yet), across all threads; one
    /// more is answered 503 + Retry-After: 1 (through app.error(503)) and the connection
    /// stays open. Must be at least 1. Large, so that a burst queues (what decides overload
    /// is how long a request waits: `max_wait`).
    std::size_t max_queue = 4096;
    /// How long a request may wait for a blocking-pool thread: one a thread takes after
    /// waiting longer is answered 503 + Retry-After: 1 instead of running (the handler, or
    /// the work a coroutine's `co_await tern::on_blocking_pool` hands over): the pool is
    /// overloaded, and an answer that late helps no one. Zero: no bound.
    std::chrono::milliseconds max_wait{5000};
};

/// Request bodies written to temporary files instead of memory (docs/uploads.md).
/// `config::spool`.
struct spool_config {
    /// Request bodies larger than this are written to an unnamed temporary file as they
    /// arrive instead of being kept in memory (`ctx.body()` then views the file, mapped
    /// read-only); 0 keeps every body in memory. See docs/uploads.md.
    std::size_t body_above = 1024 * 1024;
    /// Directory of those files; empty: $TMPDIR, else /tmp. Give it a file system of its
    /// own, larger than `max_bytes`.
    std::string directory;
    /// Bytes all spooled bodies of the server may hold at once (taken as bytes arrive, or
    /// at once when a request declares its length); a body that would pass it is answered
    /// 503 + Retry-After, and the server goes on (docs/uploads.md). 0: no bound.
    std::uint64_t max_bytes = 1024ULL * 1024 * 1024;
};

/// Streamed answers: `ctx.stream()` and Server-Sent Events (docs/streaming.md).
/// `config::streams`.
struct streams_config {
    /// Bytes a streamed body (`ctx.stream()`, SSE) may queue for a client before `write`
    /// returns false (backpressure: wait for `on_writable`). Per stream.
    std::size_t buffer_size = 64 * 1024;
    /// Bytes a stream may queue at most: a producer that writes past it (ignoring the
    /// false) has its stream cut off, so a client that stops reading costs at most this.
    /// At least `buffer_size`.
    std::size_t max_buffer = 1024 * 1024;
    /// Silence after which an SSE stream sends a comment (`:`), so proxies keep it open and
    /// a client that left is noticed; 0 turns it off.
    std::chrono::milliseconds sse_keep_alive{15'000};
};

/// WebSocket connections (docs/websocket.md). `config::websocket`.
struct websocket_config {
    /// The largest WebSocket message (and so frame) a peer may send, counted after
    /// decompression; a larger one closes the connection with 1009 (docs/websocket.md).
    std::size_t max_message_size = 1024 * 1024;
    /// Silence (nothing sent) after which a WebSocket connection is pinged; a peer that has
    /// sent nothing by the next interval is closed. 0: no pings.
    std::chrono::milliseconds ping_interval{30'000};
    /// Accept permessage-deflate (RFC 7692) when a WebSocket client offers it. Off by
    /// default: each compressing connection keeps zlib state (see docs/websocket.md).
    bool compression = false;
};

/// HTTP/2 (docs/http2.md). `config::http2`.
struct http2_config {
    /// Serve HTTP/2 (docs/http2.md): `h2` chosen by ALPN on an HTTPS listener, and h2c with
    /// prior knowledge (a client that opens with the HTTP/2 preface) on a plain one. Off:
    /// HTTP/1.1 only (ALPN offers `http/1.1` alone, the preface is answered 505).
    bool enabled = true;
    /// Streams one HTTP/2 client may have open at once (SETTINGS_MAX_CONCURRENT_STREAMS); a
    /// stream past it is refused (RST_STREAM REFUSED_STREAM). At least 1.
    std::uint32_t max_concurrent_streams = 100;
    /// Response bytes one HTTP/2 connection may hold unsent (bodies made in memory, not yet
    /// framed); while it holds this much, no new stream's handler runs: new streams wait, in
    /// order, until the client has taken enough (docs/http2.md). At least 1.
    std::size_t max_unsent = 4 * 1024 * 1024;
    /// File bodies one HTTP/2 connection may send at once, each an open descriptor; at the
    /// limit no new stream's handler runs until one is done. At least 1.
    std::size_t max_open_files = 8;
    /// Bytes of spooled request bodies one HTTP/2 connection may hold at once; past it a
    /// stream's body is answered 503 + Retry-After, unless it is the connection's only
    /// spooled body (bounded then by its body limit, as over HTTP/1.1, where a connection
    /// spools one body at a time). At least 1.
    std::uint64_t max_spooled_bytes = 64 * 1024 * 1024;
    /// Bytes of request bodies one HTTP/2 connection may hold in memory (bodies under
    /// `spool_config::body_above`, until their streams close). Past it, a stream's body
    /// grows only by the window it had: flow-control window is given back as bodies are let
    /// go, not as they arrive. The body still arriving that holds the most always gets its
    /// window, so a single upload larger than the window completes and many finish one after
    /// another (docs/http2.md, "What one connection may hold"). A stream the server holds
    /// back is not idle by `timeouts_config::body_idle`. At least 1.
    std::size_t max_body_memory = 4 * 1024 * 1024;
    /// Bytes an HTTP/2 stream (and a connection) waiting for flow-control window must send
    /// per `timeouts_config::write` (or all it has); less, and the stream is reset
    /// (RST_STREAM CANCEL), the connection ended (GOAWAY ENHANCE_YOUR_CALM). A minimum rate,
    /// not "any progress".
    std::size_t min_send_progress = 16 * 1024;
};

/// HTTP/3 over QUIC (docs/http3.md): what one connection may do at once. Served only with
/// `config::http3_port` set.
struct http3_config {
    /// Request streams one client may have open at once (QUIC's initial_max_streams_bidi,
    /// raised again as streams close); the client waits for room before it opens more. At
    /// least 1.
    std::uint32_t max_concurrent_streams = 100;
    /// Bytes a client may send on one stream ahead of tern's reading (QUIC's stream
    /// flow-control window). At least 1,024.
    std::uint32_t stream_window = 256 * 1024;
    /// The same for all the streams of one connection together. At least `stream_window`.
    std::uint32_t connection_window = 1024 * 1024;
    /// QUIC connections whose handshake has not completed, across the workers (they count
    /// among `limits_config::max_concurrent_connections` too); an Initial past it is dropped
    /// (the client retries). Each holds about 65 KiB until it completes or times out
    /// (docs/http3.md, "Half-open connections"). At least 1.
    std::size_t max_handshakes = 1'000;
    /// How long a QUIC handshake may take from the client's first Initial (after its
    /// Retry); then the connection is dropped without a word. At least 1 ms.
    std::chrono::milliseconds handshake_timeout{5'000};
    /// Response bytes one HTTP/3 connection may hold in memory that the client has not yet
    /// acknowledged (bodies made in memory; pieces of files and streamed bodies); while it
    /// holds this much, no new stream's handler runs: complete requests wait, in order, until
    /// the client has acknowledged enough (docs/http3.md). At least 1.
    std::size_t max_unacked = 4 * 1024 * 1024;
    /// File bodies and spooled request bodies one HTTP/3 connection may have open at once,
    /// each a descriptor; at the limit no new stream's handler runs until one is done, and a
    /// request body that would spool as one more file is rejected (H3_REQUEST_REJECTED: the
    /// client may retry it). At least 1.
    std::size_t max_open_files = 8;
    /// Spooled request body bytes one HTTP/3 connection may hold beside another spooled
    /// body; a body that would pass it is answered 503 + Retry-After (its only spooled body
    /// is bounded by its body limit alone, as over HTTP/1.1). At least 1.
    std::uint64_t max_spooled_bytes = 64 * 1024 * 1024;
    /// Bytes of request bodies one HTTP/3 connection may hold in memory, as
    /// `http2_config::max_body_memory`: past it, a stream's flow-control window
    /// (`stream_window`) is extended only as bodies are let go, not as they arrive; the body
    /// still arriving that holds the most always gets its window (docs/http3.md). At least 1.
    std::size_t max_body_memory = 4 * 1024 * 1024;
    /// Bytes of an answer the client must acknowledge per `timeouts_config::write` while the
    /// answer waits on it (its flow control or its acknowledgements, not the handler or a
    /// streamed body's producer); less, and the stream is reset (H3_REQUEST_CANCELLED). The
    /// connection is held to it too: while any answer waits, its streams together must make
    /// it, else every answer that waits is reset. A minimum rate, not "any progress", as
    /// `http2_config::min_send_progress`; 0: any progress (a byte).
    std::size_t min_send_progress = 16 * 1024;
};

/// The settings of one `tern::app`, grouped by concern. Defaults follow docs/limits.md;
/// each limit names the status a client gets when it is exceeded. Values are fixed once the
/// server starts. docs/configuration.md lists every field and its fluent setter.
struct config {
    /// Worker threads, each with its own event loop and acceptor. 0: one per hardware thread.
    unsigned threads = 0;

    /// What one client may send.
    limits_config limits;
    /// How long each phase of a connection may take.
    timeouts_config timeouts;
    /// The blocking pool.
    blocking_config blocking;
    /// Request bodies kept in temporary files.
    spool_config spool;
    /// Streamed answers and SSE.
    streams_config streams;
    /// WebSocket.
    websocket_config websocket;
    /// HTTP/2.
    http2_config http2;

    /// Every connection starts with a PROXY protocol header (version 1 or 2, HAProxy's
    /// spec) from a TCP load balancer, whose source address becomes the client's address
    /// (`ctx.ip()`). A connection without a valid header is closed without an answer. Only
    /// for listeners that nothing but the balancer can reach (docs/deploy.md).
    bool proxy_protocol = false;
    /// How file bodies larger than 16 KiB leave over plain HTTP. Off (the default, as in
    /// nginx): read in 64 KiB pieces into the event loop's buffer and sent (`pread` +
    /// `send`). On: `sendfile(2)`, which saves the server a copy of every byte but hands
    /// the reader page-cache pages to copy from: over loopback (a proxy or a client on the
    /// same host) that made 10 MiB downloads about half as fast (docs/performance.md).
    /// Turn it on for large files sent to other hosts through a network card.
    bool sendfile = false;

    /// Directories served as static files, in the order they are tried.
    std::vector<static_files_config> static_files;
    /// CORS answers and headers; unset: none.
    std::optional<cors_config> cors;
    /// Compression of responses; unset: none.
    std::optional<compression_config> compression;
    /// HTTPS on the listener (docs/tls.md); unset: plain HTTP.
    std::optional<tls_config> tls;
    /// HTTP/3 over QUIC on this UDP port with `tls`'s first certificate and key, as files
    /// (docs/http3.md); 0: none. Needs a build with HTTP/3 (the default, `TERN_HTTP3`).
    std::uint16_t http3_port = 0;
    /// HTTP/3's bounds per connection.
    http3_config http3;
    /// Readiness and liveness routes and the stop's grace period; unset: none, and a stop
    /// closes the listener at once.
    std::optional<health_config> health;
    /// Sessions (`ctx.session()`, docs/sessions.md); unset: off, and ctx.session() throws.
    std::optional<session_config> sessions;
    /// Key of signed cookies (`ctx.set_signed_cookie`): at least 32 bytes; empty: none,
    /// and signed cookies throw std::logic_error.
    std::string cookie_secret;
};

}  // namespace tern

#pragma once
/// @file app.hpp
/// The server: routes, settings, and its lifecycle.

#include <tern/config.hpp>
#include <tern/context.hpp>
#include <tern/export.hpp>
#include <tern/stats.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace tern {

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
    app& get(std::string_view pattern, handler h);
    /// Adds a handler for POST requests matching `pattern`.
    app& post(std::string_view pattern, handler h);
    /// Adds a handler for PUT requests matching `pattern`.
    app& put(std::string_view pattern, handler h);
    /// Adds a handler for PATCH requests matching `pattern`.
    app& patch(std::string_view pattern, handler h);
    /// Adds a handler for DELETE requests matching `pattern`.
    app& del(std::string_view pattern, handler h);
    /// Adds a handler for HEAD requests, overriding the automatic HEAD from GET.
    app& head(std::string_view pattern, handler h);
    /// Adds a handler for OPTIONS requests, overriding the automatic 204 + Allow.
    app& options(std::string_view pattern, handler h);
    /// Adds a handler for `method` (an RFC 9110 token, e.g. "PROPFIND"), case-sensitive.
    /// Throws std::invalid_argument for an empty or malformed method.
    app& add(std::string_view method, std::string_view pattern, handler h);

    // ---- settings (see tern::config for defaults) -----------------------------------

    /// Worker threads; 0 means one per hardware thread.
    app& threads(unsigned n);
    /// Limit on open connections. Throws std::invalid_argument for 0.
    app& max_concurrent_connections(std::size_t n);
    /// Limit on request body bytes. 0 refuses every non-empty body.
    app& max_body_size(std::size_t bytes);
    /// Limit on header fields per request. Throws std::invalid_argument for 0.
    app& max_header_count(std::size_t n);
    /// Limit on all header bytes of a request. Throws std::invalid_argument for 0.
    app& max_header_size(std::size_t bytes);
    /// Limit on the request line's bytes. Throws std::invalid_argument below 16.
    app& max_line_size(std::size_t bytes);
    /// Empty lines tolerated before a request line.
    app& max_empty_lines(std::size_t n);
    /// Requests served on one connection before it closes; 0 (the default) is unlimited.
    app& max_requests_per_connection(std::size_t n);
    /// Serves the files under `directory` at "/" (see docs/static-files.md).
    app& static_files(std::string directory);
    /// Serves a directory as described by `files`.
    app& static_files(static_files_config files);
    /// All settings as they stand.
    const tern::config& settings() const noexcept;

    // ---- lifecycle -------------------------------------------------------------------

    /// Serves on all interfaces at `port` and blocks until `stop()` or SIGINT/SIGTERM.
    /// Throws std::system_error when the port cannot be bound.
    void listen(std::uint16_t port);
    /// Serves on `host` (an IP address) at `port`, blocking as `listen(port)`.
    void listen(const std::string& host, std::uint16_t port);
    /// Starts serving on `host` at `port` (0: any free port, see `port()`) and returns.
    /// Throws std::system_error when the port cannot be bound, std::logic_error if running.
    void start(const std::string& host = "127.0.0.1", std::uint16_t port = 0);
    /// Stops accepting, closes idle connections, lets in-flight requests finish (they get
    /// `Connection: close`) for up to `drain_timeout`, then closes what remains and joins
    /// the worker threads. Safe to call more than once. Called from a handler, it only
    /// begins the stop; the thread that called `listen` or `start` finishes it.
    void stop();
    /// The bound port once started (useful with port 0); 0 before.
    std::uint16_t port() const noexcept;
    /// The running server's counters (all zero when not running); see tern::server_stats.
    server_stats stats() const noexcept;

private:
    struct impl;
    std::unique_ptr<impl> impl_;
};

}  // namespace tern

#pragma once
// The network side of an app: worker threads, binding, signals and the graceful stop.

#include "http/byte_transport.hpp"
#include "http/datagram_port.hpp"
#include "http/exchange_port.hpp"
#include "http/request_handler.hpp"

#include <tern/config.hpp>
#include <tern/stats.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace tern::detail {

/// Runs `config.threads` workers (one event loop each) serving `handler` on one port, each
/// connection with the protocol `open` makes for it.
class server {
public:
    /// `h2_ready`: asked before TLS agrees on h2 (null: HTTP/2 is never agreed over TLS).
    /// `datagrams`: the protocol of HTTP/3's UDP socket (config::http3_port), null for none.
    server(const config& settings, request_handler& handler, protocol_opener open,
           h2_ready_check h2_ready, datagram_opener datagrams = nullptr);
    ~server();
    server(const server&) = delete;
    server& operator=(const server&) = delete;

    /// Binds every worker to `host`:`port` and starts their threads. Throws
    /// std::system_error when the address is invalid or the port cannot be bound.
    void start(const std::string& host, std::uint16_t port);
    /// As `start`, on the listening socket `fd` made elsewhere (app::start_fd). Throws
    /// std::invalid_argument when `fd` is not a listening TCP or Unix stream socket.
    void start_fd(int fd);
    /// As `start`, on a Unix domain socket made at `path` with `permissions` (app::start_unix);
    /// the path is removed when the stop closes the listener.
    void start_unix(const std::string& path, unsigned permissions);
    /// The bound port.
    std::uint16_t port() const noexcept;
    /// The plain-HTTP listener's port beside HTTPS; 0 when there is none.
    std::uint16_t plain_port() const noexcept;
    /// Where `app::listen(port)` binds: "::" (dual-stack) when the host has IPv6, else
    /// "0.0.0.0".
    static std::string all_interfaces();
    /// Thread-safe and idempotent: stop accepting and drain (see app::stop), after the
    /// grace period of health_config when set (readiness 503, connections closing).
    void begin_stop() noexcept;
    /// Re-reads the TLS certificates (app::reload_tls). Throws std::invalid_argument, and
    /// keeps the certificates in use, when they cannot be loaded.
    void reload_tls();
    /// Takes SIGINT and SIGTERM (and SIGHUP with TLS) from now on, for wait_for_stop_signal:
    /// called before the listeners open (app::listen), so that a signal sent as soon as the
    /// port answers begins the stop instead of killing the process. Idempotent.
    void catch_stop_signals();
    /// Blocks until SIGINT or SIGTERM arrives (or arrived since catch_stop_signals) or
    /// `begin_stop` is called, then begins the stop. With TLS, SIGHUP meanwhile reloads the
    /// certificates (a failure is logged).
    void wait_for_stop_signal();
    /// After `begin_stop`: waits until every worker has closed its connections (the drain,
    /// at most about timeouts.drain). True when some worker still waits for a blocking
    /// handler that outlived the drain: its thread ends when the handler returns. Not from a
    /// worker thread.
    bool wait_drained();
    /// Waits for every worker thread to finish. Not from a worker thread.
    void join();
    /// The counters of every worker, summed.
    server_stats stats() const noexcept;
    /// Whether the calling thread is one of this server's workers.
    bool on_worker_thread() const noexcept;
    /// The doors into the workers' loops, one per worker in order (app::post and every).
    std::vector<std::shared_ptr<loop_door>> doors() const;

private:
    unsigned thread_count() const noexcept;
    // Starts one thread per bound worker.
    void launch();
    // The stop proper: the listener closes and the workers drain.
    void stop_accepting() noexcept;
    // Ends a grace period early (the server is being destroyed).
    void cut_grace() noexcept;

    struct impl;
    std::unique_ptr<impl> impl_;
};

}  // namespace tern::detail

#include "net/server.hpp"

#include "net/worker.hpp"

#include <asio/io_context.hpp>
#include <asio/post.hpp>
#include <asio/signal_set.hpp>

#include <pthread.h>
#include <signal.h>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <thread>
#include <vector>

namespace tern::detail {

namespace {

thread_local const void* current_server = nullptr;

parser_limits limits_of(const config& c, const body_planner& planner) {
    parser_limits l;
    l.max_body_size = c.max_body_size;
    l.planner = &planner;
    l.spool_body_above = c.spool_body_above;
    l.spool_directory = c.spool_directory;
    l.max_header_count = c.max_header_count;
    l.max_header_size = c.max_header_size;
    l.max_line_size = c.max_line_size;
    l.max_empty_lines = c.max_empty_lines;
    return l;
}

// A peer that resets a connection turns the next send into SIGPIPE, which kills the process
// by default. asio's sends pass MSG_NOSIGNAL, but sendfile(2) has no such flag. Blocking the
// signal in tern's own threads makes it an EPIPE error there, without changing the
// disposition the application chose for its other threads.
void block_sigpipe() noexcept {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

// SO_REUSEPORT would let this server quietly share a port with another listener of the same
// user (another program, a second tern::app). Binding a probe without it first makes a port
// in use an error, as users expect from a server.
void refuse_port_in_use(const asio::ip::tcp::endpoint& endpoint) {
    asio::io_context io;
    asio::ip::tcp::acceptor probe(io);
    probe.open(endpoint.protocol());
    probe.set_option(asio::socket_base::reuse_address(true));  // TIME_WAIT is not "in use"
    probe.bind(endpoint);
}

}  // namespace

struct server::impl {
    shared_state shared;
    std::vector<std::unique_ptr<worker>> workers;
    std::vector<std::thread> threads;
    std::uint16_t port = 0;
    std::uint16_t plain_port = 0;  // the plain-HTTP listener beside HTTPS, 0 when none

    // listen(): a private loop in the caller's thread waiting for a signal or a stop.
    std::mutex waiter_mutex;
    asio::io_context waiter{1};
    bool waiting = false;
    bool stop_requested = false;

    impl(const config& settings, request_handler& handler)
        : shared{settings, limits_of(settings, handler), handler} {}
};

server::server(const config& settings, request_handler& handler)
    : impl_(std::make_unique<impl>(settings, handler)) {}

server::~server() {
    begin_stop();
    if (!on_worker_thread()) join();
}

void server::start(const std::string& host, std::uint16_t port) {
    auto& s = *impl_;
    const unsigned n = s.shared.settings.threads != 0
                           ? s.shared.settings.threads
                           : std::max(1u, std::thread::hardware_concurrency());
    asio::ip::tcp::endpoint endpoint(asio::ip::make_address(host), port);
    // The certificates are loaded before anything binds: a bad file is an error at start.
    if (s.shared.settings.tls)
        s.shared.tls = tls_context::build(*s.shared.settings.tls, s.shared.settings.http2);
    if (port != 0) refuse_port_in_use(endpoint);
    // With HTTPS, a plain-HTTP listener beside it when asked for (tls_config::http_port).
    std::optional<asio::ip::tcp::endpoint> plain;
    if (const auto& tls = s.shared.settings.tls; tls && tls->http_port) {
        if (*tls->http_port != 0 && *tls->http_port == port) {
            throw std::invalid_argument("tern: tls http_port is the HTTPS port itself");
        }
        plain.emplace(endpoint.address(), *tls->http_port);
        if (*tls->http_port != 0) refuse_port_in_use(*plain);
    }
    for (unsigned i = 0; i < n; ++i) {
        auto w = std::make_unique<worker>(s.shared);
        w->bind(endpoint);
        if (plain) w->bind_plain(*plain);
        // Port 0 picks a free port once; the other workers share that one.
        if (i == 0) {
            endpoint.port(w->local_endpoint().port());
            if (plain) plain->port(w->plain_endpoint().port());
        }
        s.workers.push_back(std::move(w));
    }
    s.port = endpoint.port();
    s.plain_port = plain ? plain->port() : 0;
    s.shared.https_port = s.port;
    for (auto& w : s.workers) {
        s.threads.emplace_back([this, w = w.get()] {
            current_server = this;
            block_sigpipe();
            w->run();
        });
    }
}

std::uint16_t server::port() const noexcept { return impl_->port; }

std::uint16_t server::plain_port() const noexcept { return impl_->plain_port; }

void server::begin_stop() noexcept {
    auto& s = *impl_;
    if (s.shared.stopping.exchange(true)) return;
    for (auto& w : s.workers) w->post_stop();
    std::lock_guard lock(s.waiter_mutex);
    s.stop_requested = true;
    if (s.waiting) s.waiter.stop();
}

void server::reload_tls() {
    auto& s = *impl_;
    if (!s.shared.settings.tls) throw std::logic_error("tern: reload_tls() without tls settings");
    // Built here, on the caller's thread (it reads files); each worker takes it on its own
    // thread, for the connections it accepts from then on. Connections already open keep
    // the certificates they started with.
    std::shared_ptr<const tls_context> fresh =
        tls_context::build(*s.shared.settings.tls, s.shared.settings.http2);
    for (auto& w : s.workers) {
        w->door()->post([w = w.get(), fresh] { w->set_tls(fresh); });
    }
}

void server::wait_for_stop_signal() {
    auto& s = *impl_;
    asio::signal_set signals(s.waiter, SIGINT, SIGTERM);
    if (s.shared.settings.tls) signals.add(SIGHUP);  // reloads the certificates
    {
        std::lock_guard lock(s.waiter_mutex);
        if (s.stop_requested) return;
        s.waiting = true;
    }
    std::function<void(std::error_code, int)> on_signal = [&](std::error_code ec, int sig) {
        if (ec) return;
        if (sig != SIGHUP) {
            begin_stop();
            return;
        }
        try {
            reload_tls();
            std::fprintf(stderr, "tern: SIGHUP: TLS certificates reloaded\n");
        } catch (const std::exception& e) {
            std::fprintf(stderr, "tern: SIGHUP: TLS reload failed, the old certificates stay: %s\n",
                         e.what());
        }
        signals.async_wait(on_signal);
    };
    signals.async_wait(on_signal);
    s.waiter.run();
    std::lock_guard lock(s.waiter_mutex);
    s.waiting = false;
}

bool server::wait_drained() {
    auto& s = *impl_;
    std::unique_lock lock(s.shared.drain_mutex);
    s.shared.drained_cv.wait(lock, [&] { return s.shared.drained_workers >= s.workers.size(); });
    return s.shared.stragglers;
}

void server::join() {
    for (auto& t : impl_->threads) {
        if (t.joinable()) t.join();
    }
}

server_stats server::stats() const noexcept {
    server_stats total;
    for (const auto& w : impl_->workers) w->add_stats(total);
    total.open_connections = impl_->shared.open_connections.load(std::memory_order_relaxed);
    return total;
}

bool server::on_worker_thread() const noexcept { return current_server == this; }

}  // namespace tern::detail

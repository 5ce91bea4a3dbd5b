#include "net/server.hpp"

#include "net/worker.hpp"

#include "http/spool_quota.hpp"
#include "platform/listeners.hpp"
#include "platform/sockets.hpp"

#include <asio/io_context.hpp>
#include <asio/ip/tcp.hpp>
#include <asio/ip/v6_only.hpp>
#include <asio/post.hpp>
#include <asio/signal_set.hpp>

#include <csignal>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <condition_variable>
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
    l.max_body_size = c.limits.max_body_size;
    l.planner = &planner;
    l.spool_body_above = c.spool.body_above;
    l.spool_directory = c.spool.directory;
    l.max_header_count = c.limits.max_header_count;
    l.max_header_size = c.limits.max_header_size;
    l.max_line_size = c.limits.max_line_size;
    l.max_empty_lines = c.limits.max_empty_lines;
    return l;
}

// What ALPN may agree on: h2 when HTTP/2 is on, and then only when the check says it can be
// served (tls_context::build).
h2_ready_check h2_offer(const shared_state& shared) noexcept {
    return shared.settings.http2.enabled ? shared.h2_ready : nullptr;
}

// SO_REUSEPORT would let this server quietly share a port with another listener of the same
// user (another program, a second tern::app). Binding a probe without it first makes a port
// in use an error, as users expect from a server.
void refuse_port_in_use(const asio::ip::tcp::endpoint& endpoint) {
    asio::io_context io;
    asio::ip::tcp::acceptor probe(io);
    probe.open(endpoint.protocol());
    if (endpoint.address().is_v6() && endpoint.address().is_unspecified()) {
        probe.set_option(asio::ip::v6_only(false));  // as the workers bind it: IPv4 too
    }
    probe.set_option(asio::socket_base::reuse_address(true));  // TIME_WAIT is not "in use"
    probe.bind(endpoint);
}

// An IP address as it is, a host name resolved once (getaddrinfo): its first IPv4 address,
// since IPv4 clients are the common case for a name like "localhost", else its first one.
asio::ip::address resolve_host(const std::string& host) {
    std::error_code ec;
    const auto literal = asio::ip::make_address(host, ec);
    if (!ec) return literal;
    asio::io_context io;
    asio::ip::tcp::resolver resolver(io);
    const auto results = resolver.resolve(host, "", ec);
    if (ec || results.empty()) {
        throw std::system_error(ec ? ec : make_error_code(asio::error::host_not_found),
                                "tern: cannot listen on '" + host +
                                    "': not an IP address, and the name does not resolve");
    }
    for (const auto& entry : results) {
        if (entry.endpoint().address().is_v4()) return entry.endpoint().address();
    }
    return results.begin()->endpoint().address();
}

// With HTTPS and tls_config::http_port: where the plain-HTTP listener goes, on the address
// of `https`, checked free; none otherwise. Throws when it is the HTTPS port itself.
std::optional<asio::ip::tcp::endpoint> plain_listener_beside(const config& settings,
                                                             const asio::ip::tcp::endpoint& https) {
    const auto& tls = settings.tls;
    if (!tls || !tls->http_port) return std::nullopt;
    const std::uint16_t port = *tls->http_port;
    if (port != 0 && port == https.port()) {
        throw std::invalid_argument("tern: tls http_port is the HTTPS port itself");
    }
    asio::ip::tcp::endpoint plain(https.address(), port);
    if (port != 0) refuse_port_in_use(plain);
    return plain;
}

}  // namespace

struct server::impl {
    shared_state shared;
    // HTTP/3's UDP sockets, one per worker (at most 256): declared before the workers, so it
    // outlives the sockets they own.
    datagram_group udp_sockets;
    std::vector<std::unique_ptr<worker>> workers;
    std::vector<std::thread> threads;
    std::uint16_t port = 0;
    std::uint16_t plain_port = 0;  // the plain-HTTP listener beside HTTPS, 0 when none

    // The grace period of health_config: a thread that waits it out, then stops.
    std::thread grace;
    std::mutex grace_mutex;
    std::condition_variable grace_cv;
    bool grace_started = false;
    bool grace_cut = false;
    // The application has been told that the stop began (request_handler::stop_began).
    std::atomic<bool> stop_told{false};

    // start_unix: the socket tern made (closed when the server ends) and its path (removed
    // when the stop closes the listener).
    platform::native_socket own_fd = platform::invalid_socket;
    std::string unix_path;

    // listen(): a private loop in the caller's thread waiting for a signal or a stop, and
    // the signals it waits for, caught from before the first connection is accepted
    // (catch_stop_signals) so that one sent the moment the port answers is not lost.
    std::mutex waiter_mutex;
    asio::io_context waiter{1};
    std::optional<asio::signal_set> stop_signals;
    bool waiting = false;
    bool stop_requested = false;

    impl(const config& settings, request_handler& handler, protocol_opener open,
         h2_ready_check h2_ready, datagram_opener datagrams)
        : shared{settings, limits_of(settings, handler), handler, open, h2_ready, datagrams} {
        shared.spool_space = std::make_shared<spool_quota>(settings.spool.max_bytes);
        shared.limits.spool_space = shared.spool_space.get();
    }
};

server::server(const config& settings, request_handler& handler, protocol_opener open,
               h2_ready_check h2_ready, datagram_opener datagrams)
    : impl_(std::make_unique<impl>(settings, handler, open, h2_ready, datagrams)) {}

server::~server() {
    cut_grace();
    begin_stop();
    if (!on_worker_thread()) join();
    if (impl_->grace.joinable()) impl_->grace.join();
    if (impl_->own_fd != platform::invalid_socket) platform::close_socket(impl_->own_fd);
}

std::string server::all_interfaces() {
    // A host without IPv6 (a container with it disabled) cannot open an IPv6 socket.
    const platform::native_socket probe = platform::open_stream_socket(AF_INET6, false);
    if (probe == platform::invalid_socket) return "0.0.0.0";
    platform::close_socket(probe);
    return "::";
}

unsigned server::thread_count() const noexcept {
    const auto& settings = impl_->shared.settings;
    return settings.threads != 0 ? settings.threads
                                 : std::max(1u, std::thread::hardware_concurrency());
}

void server::start_unix(const std::string& path, unsigned permissions) {
    auto& s = *impl_;
    s.own_fd = platform::open_unix_listener(path, permissions);
    s.unix_path = path;
    try {
        // A descriptor: Unix domain sockets are made on POSIX systems only.
        start_fd(static_cast<int>(s.own_fd));
    } catch (...) {
        platform::remove_unix_socket(path);
        throw;
    }
}

void server::start_fd(int fd) {
    auto& s = *impl_;
    if (s.shared.settings.http3_port != 0) {
        throw std::invalid_argument(
            "tern: http3 needs listen(host, port) or start(host, port): it opens its own UDP "
            "socket");
    }
    const int family = platform::listening_socket_family(fd);
    const auto& tls = s.shared.settings.tls;
    if (family == AF_UNIX && tls && tls->http_port) {
        throw std::invalid_argument(
            "tern: tls http_port has no address to bind beside a Unix socket");
    }
    if (tls) s.shared.tls = tls_context::build(*tls, h2_offer(s.shared));
    const unsigned n = thread_count();
    for (unsigned i = 0; i < n; ++i) {
        auto w = std::make_unique<worker>(s.shared);
        w->adopt(fd, family == AF_INET6);
        s.workers.push_back(std::move(w));
    }
    if (family != AF_UNIX) {
        const auto endpoint = s.workers.front()->local_endpoint();
        // With HTTPS, the plain-HTTP listener beside it, on the socket's address.
        auto plain = plain_listener_beside(s.shared.settings, endpoint);
        for (auto& w : s.workers) {
            if (!plain) break;
            w->bind_plain(*plain);
            plain->port(w->plain_endpoint().port());  // port 0 picks one; the others share it
        }
        s.plain_port = plain ? plain->port() : 0;
        s.port = endpoint.port();
    }
    s.shared.https_port = s.port;
    launch();
}

void server::start(const std::string& host, std::uint16_t port) {
    auto& s = *impl_;
    const unsigned n = thread_count();
    asio::ip::tcp::endpoint endpoint(resolve_host(host), port);
    // The certificates are loaded before anything binds: a bad file is an error at start.
    if (s.shared.settings.tls)
        s.shared.tls = tls_context::build(*s.shared.settings.tls, h2_offer(s.shared));
    if (port != 0) refuse_port_in_use(endpoint);
    // With HTTPS, a plain-HTTP listener beside it when asked for (tls_config::http_port).
    auto plain = plain_listener_beside(s.shared.settings, endpoint);
    // Linux: every worker binds the port (SO_REUSEPORT), and the kernel balances. Portable:
    // the first worker's acceptor hands connections to all of them in turn.
    const bool balanced = platform::balances_shared_port();
    for (unsigned i = 0; i < n; ++i) {
        auto w = std::make_unique<worker>(s.shared);
        if (balanced || i == 0) {
            w->bind(endpoint);
            if (plain) w->bind_plain(*plain);
        }
        // Port 0 picks a free port once; the other workers share that one.
        if (i == 0) {
            endpoint.port(w->local_endpoint().port());
            if (plain) plain->port(w->plain_endpoint().port());
        }
        s.workers.push_back(std::move(w));
    }
    if (!balanced && n > 1) {
        std::vector<worker*> loops;
        for (auto& w : s.workers) loops.push_back(w.get());
        s.workers.front()->hand_out_to(std::move(loops));
    }
    s.port = endpoint.port();
    s.plain_port = plain ? plain->port() : 0;
    s.shared.https_port = s.port;
    // HTTP/3: a UDP socket per worker on the one port (docs/http3.md, "Workers"): the kernel
    // spreads clients over them by address, and a connection lives on the worker whose
    // socket got its first Initial.
    if (s.shared.settings.http3_port != 0 && s.shared.open_datagrams != nullptr) {
        datagram_socket::refuse_in_use(host, s.shared.settings.http3_port);
        // Without SO_REUSEPORT balancing (the portable path): one socket, on the first worker.
        const std::size_t sockets = balanced ? std::min<std::size_t>(s.workers.size(), 256) : 1;
        s.udp_sockets.size = static_cast<unsigned>(sockets);
        for (std::size_t i = 0; i < sockets; ++i) {
            s.workers[i]->bind_datagrams(host, s.shared.settings.http3_port, s.udp_sockets);
        }
    }
    launch();
}

void server::launch() {
    auto& s = *impl_;
    platform::ignore_sigpipe();  // the portable path's sends have no MSG_NOSIGNAL
    for (auto& w : s.workers) {
        s.threads.emplace_back([this, w = w.get()] {
            current_server = this;
            platform::block_sigpipe();
            w->run();
        });
    }
}

std::uint16_t server::port() const noexcept { return impl_->port; }

std::uint16_t server::plain_port() const noexcept { return impl_->plain_port; }

void server::begin_stop() noexcept {
    auto& s = *impl_;
    {
        std::lock_guard lock(s.waiter_mutex);
        s.stop_requested = true;
        if (s.waiting) s.waiter.stop();
    }
    // First, before any loop hears of the stop: the application's work on the loops
    // (app::post, app::every) checks what this sets before it starts.
    if (!s.stop_told.exchange(true)) s.shared.handler.stop_began();
    const auto& health = s.shared.settings.health;
    if (!health || health->grace.count() <= 0) {
        stop_accepting();
        return;
    }
    std::lock_guard lock(s.grace_mutex);
    if (s.grace_started) return;
    s.grace_started = true;
    // Readiness turns first; the listener stays open until the balancer has seen it.
    s.shared.closing_connections.store(true, std::memory_order_relaxed);
    for (auto& w : s.workers) w->post_closing();  // HTTP/2 clients are warned (GOAWAY)
    try {
        s.grace = std::thread([this, grace = health->grace] {
            auto& st = *impl_;
            {
                std::unique_lock wait_lock(st.grace_mutex);
                st.grace_cv.wait_for(wait_lock, grace, [&] { return st.grace_cut; });
            }
            stop_accepting();
        });
    } catch (const std::system_error&) {
        stop_accepting();  // no thread to wait with: stop without the grace
    }
}

void server::stop_accepting() noexcept {
    auto& s = *impl_;
    s.shared.closing_connections.store(true, std::memory_order_relaxed);
    if (s.shared.stopping.exchange(true)) return;
    // A client connecting from now on finds no socket file (ENOENT), not a dead one.
    if (!s.unix_path.empty()) platform::remove_unix_socket(s.unix_path);
    for (auto& w : s.workers) w->post_stop();
}

void server::cut_grace() noexcept {
    auto& s = *impl_;
    std::lock_guard lock(s.grace_mutex);
    s.grace_cut = true;
    s.grace_cv.notify_all();
}

void server::reload_tls() {
    auto& s = *impl_;
    if (!s.shared.settings.tls) throw std::logic_error("tern: reload_tls() without tls settings");
    // Built here, on the caller's thread (it reads files); each worker takes it on its own
    // thread, for the connections it accepts from then on. Connections already open keep
    // the certificates they started with.
    std::shared_ptr<const tls_context> fresh =
        tls_context::build(*s.shared.settings.tls, h2_offer(s.shared));
    for (auto& w : s.workers) {
        w->door()->post([w = w.get(), fresh] { w->set_tls(fresh); });
    }
}

void server::catch_stop_signals() {
    auto& s = *impl_;
    if (s.stop_signals) return;
    // From here on SIGINT and SIGTERM (SIGHUP with TLS) are asio's: one that arrives before
    // wait_for_stop_signal waits is queued and ends that wait at once.
    s.stop_signals.emplace(s.waiter, SIGINT, SIGTERM);
    if (s.shared.settings.tls && platform::reload_signal != 0) {
        s.stop_signals->add(platform::reload_signal);  // reloads the certificates
    }
}

void server::wait_for_stop_signal() {
    auto& s = *impl_;
    catch_stop_signals();
    asio::signal_set& signals = *s.stop_signals;
    // Once the stop has begun the signals go back to their default action (a second Ctrl-C
    // during the drain ends the process; docs/shutdown.md): the set is dropped on the way out.
    struct release_signals {
        std::optional<asio::signal_set>& set;
        ~release_signals() { set.reset(); }
    } release{s.stop_signals};
    {
        std::lock_guard lock(s.waiter_mutex);
        if (s.stop_requested) return;
        s.waiting = true;
    }
    std::function<void(std::error_code, int)> on_signal = [&](std::error_code ec, int sig) {
        if (ec) return;
        if (platform::reload_signal == 0 || sig != platform::reload_signal) {
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
    // The workers have stopped, so the grace thread has ended its wait (or is about to).
    if (impl_->grace.joinable()) impl_->grace.join();
}

server_stats server::stats() const noexcept {
    server_stats total;
    for (const auto& w : impl_->workers) w->add_stats(total);
    total.open_connections = impl_->shared.open_connections.load(std::memory_order_relaxed);
    return total;
}

bool server::on_worker_thread() const noexcept { return current_server == this; }

std::vector<std::shared_ptr<loop_door>> server::doors() const {
    std::vector<std::shared_ptr<loop_door>> all;
    all.reserve(impl_->workers.size());
    for (const auto& w : impl_->workers) all.push_back(w->door());
    return all;
}

}  // namespace tern::detail

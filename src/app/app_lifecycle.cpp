// Starting and stopping the app: the listeners, building the handler chain's parts from the
// settings at start, and a stop that drains, joins and leaves blocking handlers that outlive
// it to the next start, setter or destructor.

#include "app/app_impl.hpp"
#include "http1/open.hpp"
#include "static/static_files.hpp"
#include "web/cookie_signer.hpp"
#include "web/cors.hpp"
#include "web/session_manager.hpp"

#include <functional>
#include <mutex>
#include <stdexcept>
#include <string>

namespace tern {

// ---- lifecycle ---------------------------------------------------------------------------

void app::listen(std::uint16_t port) { listen(detail::server::all_interfaces(), port); }

void app::serve_until_stopped() {
    if (auto s = impl_->running()) s->wait_for_stop_signal();
    stop();
}

// The listen variants catch the stop signals before the listeners open (see
// server::catch_stop_signals): a SIGTERM the moment the port answers stops the server.
void app::listen_fd(int fd) {
    start_with([fd](detail::server& s) {
        s.catch_stop_signals();
        s.start_fd(fd);
    });
    serve_until_stopped();
}

void app::start_fd(int fd) {
    start_with([fd](detail::server& s) { s.start_fd(fd); });
}

void app::listen_unix(const std::string& path, unsigned permissions) {
    start_with([&](detail::server& s) {
        s.catch_stop_signals();
        s.start_unix(path, permissions);
    });
    serve_until_stopped();
}

void app::start_unix(const std::string& path, unsigned permissions) {
    start_with([&](detail::server& s) { s.start_unix(path, permissions); });
}

void app::listen(const std::string& host, std::uint16_t port) {
    start_with([&](detail::server& s) {
        s.catch_stop_signals();
        s.start(host, port);
    });
    serve_until_stopped();
}

void app::start(const std::string& host, std::uint16_t port) {
    start_with([&](detail::server& s) { s.start(host, port); });
}

void app::start_with(const std::function<void(detail::server&)>& bind) {
    impl_->settle();
    std::lock_guard lock(impl_->server_mutex);
    if (impl_->server) throw std::logic_error("tern: the server is already running");
    detail::check_config(impl_->settings);
    detail::check_http3(impl_->settings);
    // Checks the directories now, so a missing one is an error at start, not a 404 later.
    const auto& cfg = impl_->settings;
    auto& p = impl_->chain;
    p.files = cfg.static_files.empty() ? nullptr
                                       : std::make_unique<detail::static_files>(cfg.static_files);
    p.cors = cfg.cors ? std::make_unique<detail::cors_policy>(*cfg.cors) : nullptr;
    p.compression = cfg.compression;
    p.stream_coders =
        cfg.compression ? std::make_shared<detail::stream_coder_slots>(cfg.compression->max_streams)
                        : nullptr;
    p.sessions = cfg.sessions ? std::make_unique<detail::session_manager>(*cfg.sessions) : nullptr;
    p.alt_svc = cfg.http3_port == 0 ? std::string()
                                    : "h3=\":" + std::to_string(cfg.http3_port) + "\"; ma=86400";
    p.signer = cfg.cookie_secret.empty()
                   ? nullptr
                   : std::make_unique<detail::cookie_signer>(cfg.cookie_secret);
    if (impl_->has_blocking_routes && !impl_->pool) {
        impl_->pool = std::make_unique<detail::blocking_pool>(
            cfg.blocking.threads, cfg.blocking.max_queue, cfg.blocking.max_wait);
    }
    {
        std::lock_guard metrics_lock(impl_->loop_metrics_mutex);
        impl_->loop_metrics.clear();  // this server's loops register theirs as it makes them
    }
    auto s = std::make_shared<detail::server>(impl_->settings, *impl_, &detail::open_protocol,
                                              &detail::h2_ready, impl_->datagrams);
    impl_->stop_begun.store(false, std::memory_order_relaxed);
    try {
        bind(*s);
    } catch (...) {
        impl_->pool.reset();  // made for this start; the next one makes its own
        throw;
    }
    // What was posted or scheduled before the start goes to the loops now (docs/loop-work.md).
    impl_->loop_tasks.open(s->doors());
    impl_->server = std::move(s);
}

void app::stop() {
    const auto s = impl_->running();
    if (!s) return;
    s->begin_stop();
    // A handler asked: its own thread cannot be joined here (nor a blocking handler's: the
    // workers wait for it); the thread that owns the app (in listen(), a later stop(), or
    // the destructor) finishes the stop.
    if (s->on_worker_thread() || impl_->on_own_pool_thread()) return;
    bool handlers_left = false;
    {
        std::lock_guard lock(impl_->join_mutex);
        // The connections are closed after at most about timeouts.drain; a blocking handler
        // cannot be interrupted, so one still running then is left to return on its own.
        handlers_left = s->wait_drained();
        if (!handlers_left) s->join();
    }
    std::lock_guard lock(impl_->server_mutex);
    // Stopped: settings and routes may change and start() may run again (both first wait
    // for the handlers left running: settle()).
    if (impl_->server == s) {
        impl_->server.reset();
        if (handlers_left) {
            impl_->retired_server = s;
            impl_->retired_pool = std::move(impl_->pool);
        } else {
            impl_->pool.reset();  // idle now: the workers waited for every blocking handler
        }
    }
}

server_stats app::stats() const noexcept {
    const auto s = impl_->running();
    return s ? s->stats() : server_stats{};
}

std::uint16_t app::port() const noexcept {
    const auto s = impl_->running();
    return s ? s->port() : 0;
}

std::uint16_t app::http_port() const noexcept {
    const auto s = impl_->running();
    return s ? s->plain_port() : 0;
}

}  // namespace tern

#pragma once
// The app's hidden half (`app::impl`): its settings and handler chain, the running server and its
// blocking pool, and the request_handler the server calls with every request (each loop's
// state, the way into the handler chain). app.cpp (the fluent setters), app_lifecycle.cpp (start
// and stop) and app_impl.cpp (the request side) share it.

#include <tern/app.hpp>

#include "app/config_check.hpp"
#include "app/loop_work.hpp"
#include "app/metrics.hpp"
#include "app/openapi_document.hpp"
#include "handling/blocking_pool.hpp"
#include "handling/dispatch.hpp"
#include "handling/request_id.hpp"
#include "handling/request_metrics.hpp"
#include "http/datagram_port.hpp"
#include "http/request_handler.hpp"
#include "net/server.hpp"

#include <atomic>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace tern {

// Hidden explicitly: a nested class takes the visibility of its enclosing class, and `app`
// is exported from a shared libtern (TERN_API).
struct __attribute__((visibility("hidden"))) app::impl final : detail::request_handler {
    tern::config settings;
    // HTTP/3's service (h3/service.hpp), named only by http3() and by app(config) given an
    // http3_port: a program that calls neither links none of src/h3 and src/quic (the examples
    // link with --gc-sections; docs/performance.md). Null: no HTTP/3.
    detail::datagram_opener datagrams = nullptr;
    // Routes, filters and mappers; static files and CORS are built into it at start().
    detail::handler_chain chain;
    // What documented routes said about themselves, for app.openapi (empty otherwise).
    detail::route_docs docs;
    // Shared so that a thread still inside listen() keeps the server alive while another
    // thread's stop() lets go of it.
    std::shared_ptr<detail::server> server;
    mutable std::mutex server_mutex;  // guards `server` itself
    std::mutex join_mutex;            // one thread joins the workers at a time
    bool has_blocking_routes = false;
    bool has_body_limits = false;      // some route has its own body limit (tern::body_limit)
    bool has_streamed_bodies = false;  // some route reads its body itself (tern::streamed_body)
    // Runs tern::blocking handlers; made at start() when some route has one, reset after
    // the workers are joined (they wait for every handler they handed to it).
    std::unique_ptr<detail::blocking_pool> pool;
    // A stop that returned while blocking handlers still ran (past timeouts.drain): the
    // server, whose loops wait for those handlers' answers, and their pool. settle() waits
    // for them and lets them go.
    std::shared_ptr<detail::server> retired_server;
    std::unique_ptr<detail::blocking_pool> retired_pool;

    void settle();

    bool on_own_pool_thread() const {
        std::lock_guard lock(server_mutex);  // the pool is made and reset under it
        return pool && pool->on_pool_thread();
    }

    std::shared_ptr<detail::server> running() const {
        std::lock_guard lock(server_mutex);
        return server;
    }

    explicit impl(tern::config c) : settings(std::move(c)) {}

    // Readiness (app::health): turned by a stop, from the thread that begins it; read by
    // the readiness route only.
    std::atomic<bool> stop_begun{false};
    // app::post, post_all and every: closed as the stop begins, before the loops hear of it.
    detail::loop_work loop_tasks;
    void stop_began() noexcept override {
        stop_begun.store(true, std::memory_order_relaxed);
        loop_tasks.close();
    }

    // One worker's state: one request at a time runs on a loop, so its scratch state is
    // reused across requests and connections without allocating once warm, and the static
    // roots stay open between requests. Made per worker, so it ends with the server.
    struct loop_state final : detail::loop_state {
        detail::exchange_scratch scratch;
        detail::root_cache roots;
        // Shared: a held response or a blocking job may end (dropped) after the loop.
        std::shared_ptr<detail::request_metrics> metrics =
            std::make_shared<detail::request_metrics>();
        detail::request_id_source ids;
        detail::whole_body_coders coders;
        // What every request on this loop starts with: the one place it is built.
        detail::exchange_env env;
    };

    // app.metrics: whether requests are counted, and the counters of the running server's
    // loops (registered as the server makes them; read by a scrape from any loop).
    bool metered = false;
    std::mutex loop_metrics_mutex;
    std::vector<std::shared_ptr<const detail::request_metrics>> loop_metrics;

    std::unique_ptr<detail::loop_state> make_loop_state() override;

    // The metrics route's answer: every loop's counters, summed.
    std::string scrape();

    void handle(detail::request& req, detail::response& res, std::string_view remote_ip,
                detail::answer_later& later, detail::loop_state& state) noexcept override;

    // body_planner: a route's own limit, else max_body_size. Routing costs only when some
    // route has a limit of its own.
    std::size_t body_limit(const detail::request& head) const noexcept override;
    detail::body_plan plan_body(const detail::request& head) const noexcept override;

    void handle_failure(detail::request& req, int status, std::string_view message,
                        detail::response& res, std::string_view remote_ip,
                        detail::loop_state& state) noexcept override;

    // Setters first wait for blocking handlers that outlived the last stop: they still use
    // the routes and settings.
    void require_not_started(const char* what) {
        settle();
        if (running()) {
            throw std::logic_error(std::string("tern: ") + what +
                                   " must be set before the server starts");
        }
    }

    // A setter: `change` applied to a copy of the settings, which must pass the one check
    // of a config (app(config) and start() use it too); a refused value changes nothing.
    template <class Change>
    void update(const char* what, Change&& change) {
        require_not_started(what);
        tern::config next = settings;
        change(next);
        detail::check_config(next);
        settings = std::move(next);
    }
};

}  // namespace tern

#include <tern/app.hpp>

#include "app/config_check.hpp"
#include "app/metrics.hpp"
#include "http/methods.hpp"
#include "http/request_handler.hpp"
#include "http/status.hpp"
#include "http/token.hpp"
#include "net/server.hpp"
#include "pipeline/blocking.hpp"
#include "pipeline/blocking_pool.hpp"
#include "pipeline/dispatch.hpp"
#include "pipeline/errors.hpp"
#include "pipeline/request_id.hpp"
#include "pipeline/request_meter.hpp"
#include "pipeline/sse_route.hpp"
#include "pipeline/ws_route.hpp"
#include "routing/router.hpp"
#include "static/static_files.hpp"
#include "web/cookie_signer.hpp"
#include "web/cors.hpp"
#include "web/session_manager.hpp"

#include <atomic>
#include <mutex>
#include <stdexcept>
#include <utility>

namespace tern {

namespace {

// A request whose handler runs on the blocking pool: its own copy of the per-thread scratch
// state (the event loop goes on with other requests), the dispatch state between the halves,
// and the connection's resume function.
struct blocking_job : std::enable_shared_from_this<blocking_job> {
    const detail::pipeline& pipeline;
    detail::exchange_scratch scratch;
    detail::exchange ex;
    detail::dispatch_state st;
    detail::answer_later::resume_fn resume;
    // Let go of without its chain ending (the client left while the handler ran): dropped.
    detail::in_flight_mark in_flight;

    blocking_job(const detail::pipeline& p, detail::exchange& from, const detail::dispatch_state& s)
        : pipeline(p),
          scratch(from.scratch),
          ex{from.req, from.res, from.remote_ip, scratch, from.env},
          st(s),
          in_flight(from.env.meter) {
        // The handler runs on a pool thread: none of the loop's own services, and no pool
        // of its own to hand work to. (`coders` stays: the answer is compressed in
        // dispatch_end, back on the loop.)
        ex.env.roots = nullptr;
        ex.env.ids = nullptr;
        ex.env.pool = nullptr;
        ex.app_body = from.app_body;
        ex.skip = from.skip;
        ex.session = std::move(from.session);  // a before filter's, for the handler to go on with
    }

    // On a pool thread: the handler; then the rest of the chain on the connection's thread.
    void run() noexcept {
        detail::dispatch_answer(pipeline, ex, st);
        resume([self = shared_from_this()] {
            detail::dispatch_end(self->pipeline, self->ex, self->st);
            self->in_flight.ended();
        });
    }

    // Over max_blocking_queue: answered on the connection's thread without the handler.
    void refuse() noexcept {
        resume([self = shared_from_this()] { self->answer_unavailable(); });
    }

    // On the connection's thread, in place of the handler (the queue is full, or the server
    // stops before the handler started): 503 + Retry-After: 1, then the rest of the chain,
    // so error handlers, CORS and the logger see it as any other tern error.
    void answer_unavailable() noexcept {
        ex.scratch.cause = tern::error_cause::refused;
        detail::set_error(ex.res, 503, detail::reason_phrase(503));
        ex.res.fields.emplace_back("Retry-After", "1");
        detail::dispatch_end(pipeline, ex, st);
        in_flight.ended();
    }
};

}  // namespace

handler blocking(handler h) {
    if (!h) throw std::invalid_argument("tern: tern::blocking of an empty handler");
    return detail::blocking_handler{std::move(h)};
}

// Hidden explicitly: a nested class takes the visibility of its enclosing class, and `app`
// is exported from a shared libtern (TERN_API).
struct __attribute__((visibility("hidden"))) app::impl final : detail::request_handler {
    tern::config settings;
    // Routes, filters and mappers; static files and CORS are built into it at start().
    detail::pipeline pipeline;
    // Shared so that a thread still inside listen() keeps the server alive while another
    // thread's stop() lets go of it.
    std::shared_ptr<detail::server> server;
    mutable std::mutex server_mutex;  // guards `server` itself
    std::mutex join_mutex;            // one thread joins the workers at a time
    bool has_blocking_routes = false;
    bool has_body_limits = false;  // some route has its own body limit (tern::body_limit)
    // Runs tern::blocking handlers; made at start() when some route has one, reset after
    // the workers are joined (they wait for every handler they handed to it).
    std::unique_ptr<detail::blocking_pool> pool;
    // A stop that returned while blocking handlers still ran (past drain_timeout): the
    // server, whose loops wait for those handlers' answers, and their pool. settle() waits
    // for them and lets them go.
    std::shared_ptr<detail::server> retired_server;
    std::unique_ptr<detail::blocking_pool> retired_pool;

    void settle() {
        std::shared_ptr<detail::server> s;
        std::unique_ptr<detail::blocking_pool> p;
        {
            std::lock_guard lock(server_mutex);
            s = std::move(retired_server);
            p = std::move(retired_pool);
        }
        if (s) s->join();  // each loop ends once the handlers it waits for have returned
        p.reset();         // idle now: joins its threads
    }

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
    void stop_began() noexcept override { stop_begun.store(true, std::memory_order_relaxed); }

    // One worker's state: one request at a time runs on a loop, so its scratch state is
    // reused across requests and connections without allocating once warm, and the static
    // roots stay open between requests. Made per worker, so it ends with the server.
    struct loop_state final : detail::loop_state {
        detail::exchange_scratch scratch;
        detail::root_cache roots;
        // Shared: a held response or a blocking job may end (dropped) after the loop.
        std::shared_ptr<detail::request_meter> meter = std::make_shared<detail::request_meter>();
        detail::request_id_source ids;
        detail::whole_body_coders coders;
        // What every request on this loop starts with: the one place it is built.
        detail::exchange_env env;
    };

    // app.metrics: whether requests are counted, and the counters of the running server's
    // loops (registered as the server makes them; read by a scrape from any loop).
    bool metered = false;
    std::mutex meters_mutex;
    std::vector<std::shared_ptr<const detail::request_meter>> meters;

    std::unique_ptr<detail::loop_state> make_loop_state() override {
        auto state = std::make_unique<loop_state>();
        auto& env = state->env;
        env.max_upload_file_size = settings.max_upload_file_size;
        env.max_json_size = settings.max_json_size;
        env.max_json_depth = settings.max_json_depth;
        env.stream_buffer_size = settings.stream_buffer_size;
        env.max_stream_buffer = settings.max_stream_buffer;
        env.sse_keep_alive = settings.sse_keep_alive;
        env.settings = &settings;
        env.pool = pool.get();
        env.sessions = pipeline.sessions.get();
        env.signer = pipeline.signer.get();
        env.roots = &state->roots;
        env.meter = metered ? state->meter.get() : nullptr;
        env.ids = &state->ids;
        env.coders = &state->coders;
        if (metered) {
            std::lock_guard lock(meters_mutex);
            meters.push_back(state->meter);
        }
        return state;
    }

    // The metrics route's answer: every loop's counters, summed.
    std::string scrape() {
        detail::metrics_snapshot snap;
        {
            std::lock_guard lock(server_mutex);
            if (server) snap.server = server->stats();
            if (pool) snap.blocking_queue = pool->waiting();
        }
        {
            std::lock_guard lock(meters_mutex);
            for (const auto& m : meters) m->add_to(snap.requests);
        }
        return detail::prometheus_text(snap);
    }

    void handle(detail::request& req, detail::response& res, std::string_view remote_ip,
                detail::answer_later& later, detail::loop_state& state) noexcept override {
        auto& own = static_cast<loop_state&>(state);
        own.scratch.reset();
        detail::exchange ex{req, res, remote_ip, own.scratch, own.env};
        ex.port = &later;
        if (!pool) {
            detail::dispatch(pipeline, ex);  // no blocking route: the whole chain here
            return;
        }
        detail::dispatch_state st;
        detail::dispatch_begin(pipeline, ex, st);
        if (detail::runs_blocking(st)) {
            auto job = std::make_shared<blocking_job>(pipeline, ex, st);
            auto* p = pool.get();
            const auto ticket = p->new_ticket();
            // The connection takes the job back (never run) when its client leaves or the
            // server stops before a pool thread has picked it up.
            job->resume = later.defer(
                [p, ticket, weak = std::weak_ptr<blocking_job>(job)]() -> std::function<void()> {
                    auto held = weak.lock();
                    if (!held || !p->cancel(ticket)) return {};
                    return [held] { held->answer_unavailable(); };
                });
            if (!p->submit(ticket, [job] { job->run(); })) job->refuse();
            return;
        }
        detail::dispatch_answer(pipeline, ex, st);
        detail::dispatch_end(pipeline, ex, st);
    }

    // body_planner: a route's own limit, else max_body_size. Routing costs only when some
    // route has a limit of its own.
    std::size_t body_limit(const detail::request& head) const noexcept override {
        if (!has_body_limits) return settings.max_body_size;
        std::vector<detail::path_param> params;
        const auto found = pipeline.routes.find(head.method, head.path, params);
        if (found.result == detail::router::outcome::found && found.body_limit != 0) {
            return found.body_limit;
        }
        return settings.max_body_size;
    }

    void handle_failure(detail::request& req, int status, std::string_view message,
                        detail::response& res, std::string_view remote_ip,
                        detail::loop_state& state) noexcept override {
        auto& own = static_cast<loop_state&>(state);
        own.scratch.reset();
        detail::exchange ex{req, res, remote_ip, own.scratch, own.env};
        detail::dispatch_failure(pipeline, ex, status, message);
    }

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

app::app() : app(tern::config{}) {}

app::app(tern::config settings) {
    detail::check_config(settings);
    impl_ = std::make_unique<impl>(std::move(settings));
}

app::~app() {
    stop();
    impl_->settle();  // blocking handlers that outlived drain_timeout use this app
}

// ---- routes ------------------------------------------------------------------------------

app& app::get(std::string_view pattern, route_handler h) {
    return add("GET", pattern, std::move(h));
}
app& app::post(std::string_view pattern, route_handler h) {
    return add("POST", pattern, std::move(h));
}
app& app::put(std::string_view pattern, route_handler h) {
    return add("PUT", pattern, std::move(h));
}
app& app::patch(std::string_view pattern, route_handler h) {
    return add("PATCH", pattern, std::move(h));
}
app& app::del(std::string_view pattern, route_handler h) {
    return add("DELETE", pattern, std::move(h));
}
app& app::head(std::string_view pattern, route_handler h) {
    return add("HEAD", pattern, std::move(h));
}
app& app::options(std::string_view pattern, route_handler h) {
    return add("OPTIONS", pattern, std::move(h));
}

app& app::sse(std::string_view pattern, sse_handler h) {
    if (!h) throw std::invalid_argument("tern: empty SSE handler for " + std::string(pattern));
    return add("GET", pattern, route_handler(detail::sse_route(std::move(h))));
}

app& app::ws(std::string_view pattern, const ws_setup& setup) {
    if (!setup)
        throw std::invalid_argument("tern: empty WebSocket setup for " + std::string(pattern));
    ws_handlers handlers;
    setup(handlers);
    auto route = std::make_shared<const ws_handlers::parts>(handlers.get());
    return add("GET", pattern, route_handler(detail::ws_route(std::move(route))));
}

app& app::add(std::string_view method, std::string_view pattern, route_handler route) {
    impl_->require_not_started("routes");
    const bool coroutine = route.is_coroutine();
    const std::size_t route_body_limit = route.body_limit();
    handler h = std::move(route).take();
    if (!h) throw std::invalid_argument("tern: empty handler for " + std::string(pattern));
    if (!detail::is_known_method(method)) {
        throw std::invalid_argument("tern: method '" + std::string(method) +
                                    "' is not one the HTTP parser accepts, so the route could "
                                    "never be reached (methods are case-sensitive)");
    }
    const bool blocking = detail::is_blocking(h);
    impl_->pipeline.routes.add(method, pattern, std::move(h), route_body_limit);
    impl_->has_body_limits = impl_->has_body_limits || route_body_limit != 0;
    // A coroutine handler may co_await tern::on_blocking_pool: the pool is started for it.
    impl_->has_blocking_routes = impl_->has_blocking_routes || blocking || coroutine;
    return *this;
}

app& app::group(std::string_view prefix, const std::function<void(tern::group&)>& fn) {
    tern::group g(*this, "");
    g.subgroup(prefix, fn);
    return *this;
}

// ---- filters and errors ------------------------------------------------------------------

app& app::before(handler h) { return add_filter(true, {}, std::move(h)); }
app& app::before(std::string_view pattern, handler h) {
    return add_filter(true, {std::string(pattern)}, std::move(h));
}
app& app::after(handler h) { return add_filter(false, {}, std::move(h)); }
app& app::after(std::string_view pattern, handler h) {
    return add_filter(false, {std::string(pattern)}, std::move(h));
}

app& app::add_filter(bool before, const std::vector<std::string>& patterns, handler h) {
    impl_->require_not_started("filters");
    (before ? impl_->pipeline.before : impl_->pipeline.after).add(patterns, std::move(h));
    return *this;
}

app& app::add_exception_mapper(detail::exception_mapper m) {
    impl_->require_not_started("exception mappers");
    impl_->pipeline.exceptions.add(std::move(m));
    return *this;
}

app& app::error(int status, handler h) {
    impl_->require_not_started("error handlers");
    if (status < 400 || status > 599) {
        throw std::invalid_argument("tern: error handlers are for statuses 400..599, not " +
                                    std::to_string(status));
    }
    if (!h) throw std::invalid_argument("tern: empty error handler");
    impl_->pipeline.errors[status] = std::move(h);
    return *this;
}

app& app::request_logger(log_handler fn) {
    impl_->require_not_started("request_logger");
    if (!fn) throw std::invalid_argument("tern: empty request logger");
    impl_->pipeline.loggers.push_back(std::move(fn));
    return *this;
}

app& app::metrics(std::string_view path) {
    impl_->require_not_started("metrics");
    auto* owner = impl_.get();
    get(path, [owner](context& ctx) {
        ctx.content_type(detail::metrics_content_type).result(owner->scrape());
    });
    impl_->metered = true;
    return *this;
}

app& app::request_ids(std::string_view header) {
    impl_->require_not_started("request_ids");
    if (!header.empty() && !detail::is_token(header)) {
        throw std::invalid_argument("tern: request_ids header '" + std::string(header) +
                                    "' is not a header name (an RFC 9110 token)");
    }
    impl_->pipeline.request_id_header = std::string(header);
    return *this;
}

app& app::trusted_proxies(const std::vector<std::string>& entries, forwarding_header header) {
    impl_->require_not_started("trusted_proxies");
    const auto written = header == forwarding_header::forwarded
                             ? detail::forwarding_header::forwarded
                             : detail::forwarding_header::x_forwarded_for;
    impl_->pipeline.proxies =
        entries.empty() ? nullptr : std::make_unique<detail::proxy_list>(entries, written);
    return *this;
}

app& app::cors(cors_config settings) {
    impl_->update("cors", [&](tern::config& c) { c.cors = std::move(settings); });
    return *this;
}

app& app::tls(tls_config settings) {
    impl_->update("tls", [&](tern::config& c) { c.tls = std::move(settings); });
    return *this;
}

app& app::tls(std::string cert_file, std::string key_file) {
    tls_config settings;
    settings.certificates.push_back({});
    settings.certificates.back().cert_file = std::move(cert_file);
    settings.certificates.back().key_file = std::move(key_file);
    return tls(std::move(settings));
}

void app::reload_tls() {
    const auto s = impl_->running();
    if (!s) throw std::logic_error("tern: reload_tls() needs a running server");
    s->reload_tls();
}

app& app::sessions(session_config settings) {
    impl_->update("sessions", [&](tern::config& c) { c.sessions = std::move(settings); });
    return *this;
}

app& app::cookie_secret(std::string_view key) {
    if (key.empty()) throw std::invalid_argument("tern: cookie_secret is empty");
    impl_->update("cookie_secret", [&](tern::config& c) { c.cookie_secret.assign(key); });
    return *this;
}

app& app::compression(compression_config settings) {
    impl_->update("compression", [&](tern::config& c) { c.compression = settings; });
    return *this;
}

// ---- settings ----------------------------------------------------------------------------

app& app::blocking_threads(unsigned n) {
    impl_->update("blocking_threads", [&](tern::config& c) { c.blocking_threads = n; });
    return *this;
}

app& app::max_blocking_queue(std::size_t n) {
    impl_->update("max_blocking_queue", [&](tern::config& c) { c.max_blocking_queue = n; });
    return *this;
}

app& app::threads(unsigned n) {
    impl_->update("threads", [&](tern::config& c) { c.threads = n; });
    return *this;
}

app& app::max_concurrent_connections(std::size_t n) {
    impl_->update("max_concurrent_connections",
                  [&](tern::config& c) { c.max_concurrent_connections = n; });
    return *this;
}

app& app::max_body_size(std::size_t bytes) {
    impl_->update("max_body_size", [&](tern::config& c) { c.max_body_size = bytes; });
    return *this;
}

app& app::spool_body_above(std::size_t bytes) {
    impl_->update("spool_body_above", [&](tern::config& c) { c.spool_body_above = bytes; });
    return *this;
}

app& app::spool_directory(std::string directory) {
    impl_->update("spool_directory",
                  [&](tern::config& c) { c.spool_directory = std::move(directory); });
    return *this;
}

app& app::max_spooled_bytes(std::uint64_t bytes) {
    impl_->update("max_spooled_bytes", [&](tern::config& c) { c.max_spooled_bytes = bytes; });
    return *this;
}

app& app::max_header_count(std::size_t n) {
    impl_->update("max_header_count", [&](tern::config& c) { c.max_header_count = n; });
    return *this;
}

app& app::max_header_size(std::size_t bytes) {
    impl_->update("max_header_size", [&](tern::config& c) { c.max_header_size = bytes; });
    return *this;
}

app& app::max_line_size(std::size_t bytes) {
    impl_->update("max_line_size", [&](tern::config& c) { c.max_line_size = bytes; });
    return *this;
}

app& app::max_empty_lines(std::size_t n) {
    impl_->update("max_empty_lines", [&](tern::config& c) { c.max_empty_lines = n; });
    return *this;
}

app& app::max_requests_per_connection(std::size_t n) {
    impl_->update("max_requests_per_connection",
                  [&](tern::config& c) { c.max_requests_per_connection = n; });
    return *this;
}

app& app::max_upload_file_size(std::size_t bytes) {
    impl_->update("max_upload_file_size", [&](tern::config& c) { c.max_upload_file_size = bytes; });
    return *this;
}

app& app::max_json_size(std::size_t bytes) {
    impl_->update("max_json_size", [&](tern::config& c) { c.max_json_size = bytes; });
    return *this;
}

app& app::max_json_depth(std::size_t n) {
    impl_->update("max_json_depth", [&](tern::config& c) { c.max_json_depth = n; });
    return *this;
}

app& app::stream_buffer_size(std::size_t bytes) {
    impl_->update("stream_buffer_size", [&](tern::config& c) { c.stream_buffer_size = bytes; });
    return *this;
}

app& app::max_stream_buffer(std::size_t bytes) {
    impl_->update("max_stream_buffer", [&](tern::config& c) { c.max_stream_buffer = bytes; });
    return *this;
}

app& app::sse_keep_alive(std::chrono::milliseconds interval) {
    impl_->update("sse_keep_alive", [&](tern::config& c) { c.sse_keep_alive = interval; });
    return *this;
}

app& app::ws_max_message_size(std::size_t bytes) {
    impl_->update("ws_max_message_size", [&](tern::config& c) { c.ws_max_message_size = bytes; });
    return *this;
}

app& app::ws_ping_interval(std::chrono::milliseconds interval) {
    impl_->update("ws_ping_interval", [&](tern::config& c) { c.ws_ping_interval = interval; });
    return *this;
}

app& app::ws_compression(bool on) {
    impl_->update("ws_compression", [&](tern::config& c) { c.ws_compression = on; });
    return *this;
}

app& app::http2(bool on) {
    impl_->update("http2", [&](tern::config& c) { c.http2 = on; });
    return *this;
}

app& app::sendfile(bool on) {
    impl_->update("sendfile", [&](tern::config& c) { c.sendfile = on; });
    return *this;
}

app& app::proxy_protocol(bool on) {
    impl_->update("proxy_protocol", [&](tern::config& c) { c.proxy_protocol = on; });
    return *this;
}

app& app::h2_max_concurrent_streams(std::uint32_t streams) {
    impl_->update("h2_max_concurrent_streams",
                  [&](tern::config& c) { c.h2_max_concurrent_streams = streams; });
    return *this;
}

app& app::h2_max_unsent(std::size_t bytes) {
    impl_->update("h2_max_unsent", [&](tern::config& c) { c.h2_max_unsent = bytes; });
    return *this;
}

app& app::h2_max_open_files(std::size_t files) {
    impl_->update("h2_max_open_files", [&](tern::config& c) { c.h2_max_open_files = files; });
    return *this;
}

app& app::h2_max_spooled_bytes(std::uint64_t bytes) {
    impl_->update("h2_max_spooled_bytes", [&](tern::config& c) { c.h2_max_spooled_bytes = bytes; });
    return *this;
}

app& app::static_files(std::string directory) {
    static_files_config files;
    files.directory = std::move(directory);
    return static_files(std::move(files));
}

app& app::static_files(static_files_config files) {
    impl_->update("static_files",
                  [&](tern::config& c) { c.static_files.push_back(std::move(files)); });
    return *this;
}

app& app::health(health_config settings) {
    for (const auto* path : {&settings.ready_path, &settings.live_path}) {
        if (!path->empty() && path->front() != '/') {
            throw std::invalid_argument("tern: health path '" + *path + "' must start with '/'");
        }
    }
    if (settings.grace.count() < 0) throw std::invalid_argument("tern: negative health grace");
    if (impl_->settings.health) throw std::logic_error("tern: health() is set once");
    const health_config routes = settings;
    impl_->update("health", [&](tern::config& c) { c.health = std::move(settings); });
    if (!routes.ready_path.empty()) {
        get(routes.ready_path, [state = impl_.get(), check = routes.ready_check](context& ctx) {
            const bool ready =
                !state->stop_begun.load(std::memory_order_relaxed) && (!check || check());
            ctx.header("Cache-Control", "no-store");
            if (ready) {
                ctx.text("ready");
            } else {
                ctx.status(503).text("unready");
            }
        });
    }
    if (!routes.live_path.empty()) {
        get(routes.live_path, [](context& ctx) {
            ctx.header("Cache-Control", "no-store");
            ctx.text("live");
        });
    }
    return *this;
}

const tern::config& app::settings() const noexcept { return impl_->settings; }

// ---- lifecycle ---------------------------------------------------------------------------

void app::listen(std::uint16_t port) { listen(detail::server::all_interfaces(), port); }

void app::serve_until_stopped() {
    if (auto s = impl_->running()) s->wait_for_stop_signal();
    stop();
}

void app::listen_fd(int fd) {
    start_fd(fd);
    serve_until_stopped();
}

void app::start_fd(int fd) {
    start_with([fd](detail::server& s) { s.start_fd(fd); });
}

void app::listen_unix(const std::string& path, unsigned permissions) {
    start_unix(path, permissions);
    serve_until_stopped();
}

void app::start_unix(const std::string& path, unsigned permissions) {
    start_with([&](detail::server& s) { s.start_unix(path, permissions); });
}

void app::listen(const std::string& host, std::uint16_t port) {
    start(host, port);
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
    // Checks the directories now, so a missing one is an error at start, not a 404 later.
    const auto& cfg = impl_->settings;
    auto& p = impl_->pipeline;
    p.files = cfg.static_files.empty() ? nullptr
                                       : std::make_unique<detail::static_files>(cfg.static_files);
    p.cors = cfg.cors ? std::make_unique<detail::cors_policy>(*cfg.cors) : nullptr;
    p.compression = cfg.compression;
    p.stream_coders =
        cfg.compression ? std::make_shared<detail::stream_coder_slots>(cfg.compression->max_streams)
                        : nullptr;
    p.sessions = cfg.sessions ? std::make_unique<detail::session_manager>(*cfg.sessions) : nullptr;
    p.signer = cfg.cookie_secret.empty()
                   ? nullptr
                   : std::make_unique<detail::cookie_signer>(cfg.cookie_secret);
    if (impl_->has_blocking_routes && !impl_->pool) {
        impl_->pool =
            std::make_unique<detail::blocking_pool>(cfg.blocking_threads, cfg.max_blocking_queue);
    }
    {
        std::lock_guard meters_lock(impl_->meters_mutex);
        impl_->meters.clear();  // this server's loops register theirs as it makes them
    }
    auto s = std::make_shared<detail::server>(impl_->settings, *impl_);
    impl_->stop_begun.store(false, std::memory_order_relaxed);
    try {
        bind(*s);
    } catch (...) {
        impl_->pool.reset();  // made for this start; the next one makes its own
        throw;
    }
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
        // The connections are closed after at most about drain_timeout; a blocking handler
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

// ---- groups ------------------------------------------------------------------------------

std::string group::full(std::string_view pattern) const {
    // "/" inside a group is the group's own path; the pattern parser checks the rest.
    if (pattern == "/" && !prefix_.empty()) return prefix_;
    return prefix_ + std::string(pattern);
}

group& group::get(std::string_view pattern, route_handler h) {
    return add("GET", pattern, std::move(h));
}
group& group::post(std::string_view pattern, route_handler h) {
    return add("POST", pattern, std::move(h));
}
group& group::put(std::string_view pattern, route_handler h) {
    return add("PUT", pattern, std::move(h));
}
group& group::patch(std::string_view pattern, route_handler h) {
    return add("PATCH", pattern, std::move(h));
}
group& group::del(std::string_view pattern, route_handler h) {
    return add("DELETE", pattern, std::move(h));
}
group& group::head(std::string_view pattern, route_handler h) {
    return add("HEAD", pattern, std::move(h));
}
group& group::options(std::string_view pattern, route_handler h) {
    return add("OPTIONS", pattern, std::move(h));
}

group& group::add(std::string_view method, std::string_view pattern, route_handler h) {
    app_.add(method, full(pattern), std::move(h));
    return *this;
}

group& group::ws(std::string_view pattern, const ws_setup& setup) {
    app_.ws(full(pattern), setup);
    return *this;
}

group& group::subgroup(std::string_view prefix, const std::function<void(tern::group&)>& fn) {
    if (prefix.empty() || prefix.front() != '/' || prefix == "/" || prefix.back() == '/') {
        throw std::invalid_argument(
            "tern: a group prefix begins with '/' and does not end with "
            "one, like \"/api\"; got '" +
            std::string(prefix) + "'");
    }
    tern::group inner(app_, prefix_ + std::string(prefix));
    fn(inner);
    return *this;
}

group& group::before(handler h) {
    app_.add_filter(true, {prefix_, prefix_ + "/*"}, std::move(h));
    return *this;
}
group& group::before(std::string_view pattern, handler h) {
    app_.add_filter(true, {full(pattern)}, std::move(h));
    return *this;
}
group& group::after(handler h) {
    app_.add_filter(false, {prefix_, prefix_ + "/*"}, std::move(h));
    return *this;
}
group& group::after(std::string_view pattern, handler h) {
    app_.add_filter(false, {full(pattern)}, std::move(h));
    return *this;
}

}  // namespace tern

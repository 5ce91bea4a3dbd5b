// The app's fluent face: construction, routes, filters, error handlers and every setting.
// Starting and stopping are app_lifecycle.cpp's; the request side is app_impl.cpp's.

#include "app/app_impl.hpp"
#include "handling/blocking.hpp"
#include "handling/errors.hpp"
#include "handling/sse_route.hpp"
#include "handling/ws_route.hpp"
#ifdef TERN_HTTP3
#include "h3/service.hpp"
#endif
#include "http/methods.hpp"
#include "http/status.hpp"
#include "http/token.hpp"
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

handler blocking(handler h) {
    if (!h) throw std::invalid_argument("tern: tern::blocking of an empty handler");
    return detail::blocking_handler{std::move(h)};
}

namespace {

// The one place HTTP/3's code is named (see app::impl::datagrams); null in a build without it,
// where start() refuses an http3_port (config_check.cpp).
detail::datagram_opener http3_service() {
#ifdef TERN_HTTP3
    return &detail::open_datagrams;
#else
    return nullptr;
#endif
}

}  // namespace

// Not app(config{}): that one names HTTP/3's service, which a default app leaves unlinked.
app::app() : impl_(std::make_unique<impl>(tern::config{})) {}

app::app(tern::config settings) {
    detail::check_config(settings);
    const bool http3 = settings.http3_port != 0;
    impl_ = std::make_unique<impl>(std::move(settings));
    if (http3) impl_->datagrams = http3_service();
}

app::~app() {
    stop();
    impl_->loop_tasks.end();  // never started: what was posted or scheduled is dropped
    impl_->settle();          // blocking handlers that outlived timeouts.drain use this app
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
    return add("GET", pattern,
               route_handler(detail::sse_route(std::move(h))).doc(detail::sse_doc()));
}

app& app::ws(std::string_view pattern, const ws_setup& setup) {
    if (!setup)
        throw std::invalid_argument("tern: empty WebSocket setup for " + std::string(pattern));
    ws_handlers handlers;
    setup(handlers);
    auto route = std::make_shared<const ws_handlers::parts>(handlers.get());
    return add("GET", pattern,
               route_handler(detail::ws_route(std::move(route))).doc(detail::ws_doc()));
}

app& app::add(std::string_view method, std::string_view pattern, route_handler route) {
    impl_->require_not_started("routes");
    const bool coroutine = route.is_coroutine();
    const std::size_t route_body_limit = route.body_limit();
    const bool streamed = route.streamed_body();
    const std::shared_ptr<const api_doc> doc = route.doc();
    handler h = std::move(route).take();
    if (auto* marked = h.target<detail::streamed_route>()) {
        handler inner = std::move(marked->inner);  // the mark has been read: the handler alone
        h = std::move(inner);
    }
    if (!h) throw std::invalid_argument("tern: empty handler for " + std::string(pattern));
    if (!detail::is_known_method(method)) {
        throw std::invalid_argument("tern: method '" + std::string(method) +
                                    "' is not one the HTTP parser accepts, so the route could "
                                    "never be reached (methods are case-sensitive)");
    }
    const bool blocking = detail::is_blocking(h);
    if (doc) detail::check_doc_against_pattern(*doc, pattern);
    impl_->chain.routes.add(method, pattern, std::move(h), route_body_limit, streamed);
    if (doc) impl_->docs[{std::string(method), std::string(pattern)}] = doc;
    impl_->has_body_limits = impl_->has_body_limits || route_body_limit != 0;
    impl_->has_streamed_bodies = impl_->has_streamed_bodies || streamed;
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
    (before ? impl_->chain.before : impl_->chain.after).add(patterns, std::move(h));
    return *this;
}

app& app::add_exception_mapper(detail::exception_mapper m) {
    impl_->require_not_started("exception mappers");
    impl_->chain.exceptions.add(std::move(m));
    return *this;
}

app& app::error(int status, handler h) {
    impl_->require_not_started("error handlers");
    if (status < 400 || status > 599) {
        throw std::invalid_argument("tern: error handlers are for statuses 400..599, not " +
                                    std::to_string(status));
    }
    if (!h) throw std::invalid_argument("tern: empty error handler");
    impl_->chain.errors[status] = std::move(h);
    return *this;
}

app& app::request_logger(log_handler fn) {
    impl_->require_not_started("request_logger");
    if (!fn) throw std::invalid_argument("tern: empty request logger");
    impl_->chain.loggers.push_back(std::move(fn));
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
    impl_->chain.request_id_header = std::string(header);
    return *this;
}

app& app::trusted_proxies(const std::vector<std::string>& entries, forwarding_header header) {
    impl_->require_not_started("trusted_proxies");
    const auto written = header == forwarding_header::forwarded
                             ? detail::forwarding_header::forwarded
                             : detail::forwarding_header::x_forwarded_for;
    impl_->chain.proxies =
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
    impl_->update("blocking_threads", [&](tern::config& c) { c.blocking.threads = n; });
    return *this;
}

app& app::max_blocking_wait(std::chrono::milliseconds wait) {
    impl_->update("max_blocking_wait", [&](tern::config& c) { c.blocking.max_wait = wait; });
    return *this;
}

app& app::max_blocking_queue(std::size_t n) {
    impl_->update("max_blocking_queue", [&](tern::config& c) { c.blocking.max_queue = n; });
    return *this;
}

app& app::limits(limits_config settings) {
    impl_->update("limits", [&](tern::config& c) { c.limits = settings; });
    return *this;
}

app& app::timeouts(timeouts_config settings) {
    impl_->update("timeouts", [&](tern::config& c) { c.timeouts = settings; });
    return *this;
}

app& app::configure(const std::function<void(config&)>& change) {
    impl_->update("configure", change);
    return *this;
}

app& app::threads(unsigned n) {
    impl_->update("threads", [&](tern::config& c) { c.threads = n; });
    return *this;
}

app& app::max_concurrent_connections(std::size_t n) {
    impl_->update("max_concurrent_connections",
                  [&](tern::config& c) { c.limits.max_concurrent_connections = n; });
    return *this;
}

app& app::max_body_size(std::size_t bytes) {
    impl_->update("max_body_size", [&](tern::config& c) { c.limits.max_body_size = bytes; });
    return *this;
}

app& app::spool_body_above(std::size_t bytes) {
    impl_->update("spool_body_above", [&](tern::config& c) { c.spool.body_above = bytes; });
    return *this;
}

app& app::spool_directory(std::string directory) {
    impl_->update("spool_directory",
                  [&](tern::config& c) { c.spool.directory = std::move(directory); });
    return *this;
}

app& app::max_spooled_bytes(std::uint64_t bytes) {
    impl_->update("max_spooled_bytes", [&](tern::config& c) { c.spool.max_bytes = bytes; });
    return *this;
}

app& app::max_header_count(std::size_t n) {
    impl_->update("max_header_count", [&](tern::config& c) { c.limits.max_header_count = n; });
    return *this;
}

app& app::max_header_size(std::size_t bytes) {
    impl_->update("max_header_size", [&](tern::config& c) { c.limits.max_header_size = bytes; });
    return *this;
}

app& app::max_line_size(std::size_t bytes) {
    impl_->update("max_line_size", [&](tern::config& c) { c.limits.max_line_size = bytes; });
    return *this;
}

app& app::max_empty_lines(std::size_t n) {
    impl_->update("max_empty_lines", [&](tern::config& c) { c.limits.max_empty_lines = n; });
    return *this;
}

app& app::max_requests_per_connection(std::size_t n) {
    impl_->update("max_requests_per_connection",
                  [&](tern::config& c) { c.limits.max_requests_per_connection = n; });
    return *this;
}

app& app::max_upload_file_size(std::size_t bytes) {
    impl_->update("max_upload_file_size",
                  [&](tern::config& c) { c.limits.max_upload_file_size = bytes; });
    return *this;
}

app& app::max_json_size(std::size_t bytes) {
    impl_->update("max_json_size", [&](tern::config& c) { c.limits.max_json_size = bytes; });
    return *this;
}

app& app::max_json_depth(std::size_t n) {
    impl_->update("max_json_depth", [&](tern::config& c) { c.limits.max_json_depth = n; });
    return *this;
}

app& app::stream_buffer_size(std::size_t bytes) {
    impl_->update("stream_buffer_size", [&](tern::config& c) { c.streams.buffer_size = bytes; });
    return *this;
}

app& app::max_stream_buffer(std::size_t bytes) {
    impl_->update("max_stream_buffer", [&](tern::config& c) { c.streams.max_buffer = bytes; });
    return *this;
}

app& app::sse_keep_alive(std::chrono::milliseconds interval) {
    impl_->update("sse_keep_alive", [&](tern::config& c) { c.streams.sse_keep_alive = interval; });
    return *this;
}

app& app::ws_max_message_size(std::size_t bytes) {
    impl_->update("ws_max_message_size",
                  [&](tern::config& c) { c.websocket.max_message_size = bytes; });
    return *this;
}

app& app::ws_ping_interval(std::chrono::milliseconds interval) {
    impl_->update("ws_ping_interval",
                  [&](tern::config& c) { c.websocket.ping_interval = interval; });
    return *this;
}

app& app::ws_compression(bool on) {
    impl_->update("ws_compression", [&](tern::config& c) { c.websocket.compression = on; });
    return *this;
}

app& app::http3(std::uint16_t port) {
    impl_->update("http3", [&](tern::config& c) { c.http3_port = port; });
    impl_->datagrams = port == 0 ? nullptr : http3_service();
    return *this;
}

app& app::http2(bool on) {
    impl_->update("http2", [&](tern::config& c) { c.http2.enabled = on; });
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
                  [&](tern::config& c) { c.http2.max_concurrent_streams = streams; });
    return *this;
}

app& app::h2_max_unsent(std::size_t bytes) {
    impl_->update("h2_max_unsent", [&](tern::config& c) { c.http2.max_unsent = bytes; });
    return *this;
}

app& app::h2_max_open_files(std::size_t files) {
    impl_->update("h2_max_open_files", [&](tern::config& c) { c.http2.max_open_files = files; });
    return *this;
}

app& app::h2_max_spooled_bytes(std::uint64_t bytes) {
    impl_->update("h2_max_spooled_bytes",
                  [&](tern::config& c) { c.http2.max_spooled_bytes = bytes; });
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

}  // namespace tern

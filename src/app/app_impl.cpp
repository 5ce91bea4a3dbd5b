// The request side of the app: each loop's state (made once per worker), the way a request
// enters the handler chain (whole on the loop, or split around a blocking handler), failures the
// transport found, the body limit a request's route sets, and the metrics scrape.

#include "app/app_impl.hpp"

#include "app/blocking_job.hpp"

#include <functional>

namespace tern {

void app::impl::settle() {
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

std::unique_ptr<detail::loop_state> app::impl::make_loop_state() {
    auto state = std::make_unique<loop_state>();
    auto& env = state->env;
    env.max_upload_file_size = settings.limits.max_upload_file_size;
    env.max_json_size = settings.limits.max_json_size;
    env.max_json_depth = settings.limits.max_json_depth;
    env.stream_buffer_size = settings.streams.buffer_size;
    env.max_stream_buffer = settings.streams.max_buffer;
    env.sse_keep_alive = settings.streams.sse_keep_alive;
    env.settings = &settings;
    env.pool = pool.get();
    env.sessions = chain.sessions.get();
    env.signer = chain.signer.get();
    env.roots = &state->roots;
    env.metrics = metered ? state->metrics.get() : nullptr;
    env.ids = &state->ids;
    env.coders = &state->coders;
    if (metered) {
        std::lock_guard lock(loop_metrics_mutex);
        loop_metrics.push_back(state->metrics);
    }
    return state;
}

std::string app::impl::scrape() {
    detail::metrics_snapshot snap;
    {
        std::lock_guard lock(server_mutex);
        if (server) snap.server = server->stats();
        if (pool) snap.blocking_queue = pool->waiting();
    }
    {
        std::lock_guard lock(loop_metrics_mutex);
        for (const auto& m : loop_metrics) m->add_to(snap.requests);
    }
    return detail::prometheus_text(snap);
}

void app::impl::handle(detail::request& req, detail::response& res, std::string_view remote_ip,
                       detail::answer_later& later, detail::loop_state& state) noexcept {
    auto& own = static_cast<loop_state&>(state);
    own.scratch.reset();
    detail::exchange ex{req, res, remote_ip, own.scratch, own.env};
    ex.port = &later;
    if (!pool) {
        detail::dispatch(chain, ex);  // no blocking route: the whole chain here
        return;
    }
    detail::dispatch_state st;
    detail::dispatch_begin(chain, ex, st);
    if (detail::runs_blocking(st)) {
        auto job = std::make_shared<detail::blocking_job>(chain, ex, st);
        auto* p = pool.get();
        const auto ticket = p->new_ticket();
        // The connection takes the job back (never run) when its client leaves or the
        // server stops before a pool thread has picked it up.
        job->resume = later.defer(
            [p, ticket,
             weak = std::weak_ptr<detail::blocking_job>(job)]() -> std::function<void()> {
                auto held = weak.lock();
                if (!held || !p->cancel(ticket)) return {};
                return [held] { held->answer_unavailable(); };
            });
        // Past max_blocking_wait in the queue, the job is answered 503 instead of running.
        if (!p->submit(
                ticket, [job] { job->run(); }, [job] { job->refuse(); }))
            job->refuse();
        return;
    }
    detail::dispatch_answer(chain, ex, st);
    detail::dispatch_end(chain, ex, st);
}

std::size_t app::impl::body_limit(const detail::request& head) const noexcept {
    if (!has_body_limits) return settings.limits.max_body_size;
    std::vector<detail::path_param> params;
    const auto found = chain.routes.find(head.method, head.path, params);
    if (found.result == detail::router::outcome::found && found.body_limit != 0) {
        return found.body_limit;
    }
    return settings.limits.max_body_size;
}

detail::body_plan app::impl::plan_body(const detail::request& head) const noexcept {
    if (!has_body_limits && !has_streamed_bodies) return {settings.limits.max_body_size, false};
    std::vector<detail::path_param> params;
    const auto found = chain.routes.find(head.method, head.path, params);
    if (found.result != detail::router::outcome::found) return {settings.limits.max_body_size};
    return {found.body_limit != 0 ? found.body_limit : settings.limits.max_body_size,
            found.streamed_body};
}

void app::impl::handle_failure(detail::request& req, int status, std::string_view message,
                               detail::response& res, std::string_view remote_ip,
                               detail::loop_state& state) noexcept {
    auto& own = static_cast<loop_state&>(state);
    own.scratch.reset();
    detail::exchange ex{req, res, remote_ip, own.scratch, own.env};
    detail::dispatch_failure(chain, ex, status, message);
}

}  // namespace tern

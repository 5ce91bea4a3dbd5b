#pragma once
// A request whose handler runs on the blocking pool (`tern::blocking`): its own copy of the
// loop's scratch state (the event loop goes on with other requests), the dispatch state
// between the halves, and the connection's resume function.

#include "handling/dispatch.hpp"
#include "handling/errors.hpp"
#include "handling/request_metrics.hpp"
#include "http/request_handler.hpp"
#include "http/status.hpp"

#include <memory>

namespace tern::detail {

struct blocking_job : std::enable_shared_from_this<blocking_job> {
    const detail::handler_chain& chain;
    detail::exchange_scratch scratch;
    detail::exchange ex;
    detail::dispatch_state st;
    detail::answer_later::resume_fn resume;
    // Let go of without its chain ending (the client left while the handler ran): dropped.
    detail::in_flight_mark in_flight;

    blocking_job(const detail::handler_chain& p, detail::exchange& from,
                 const detail::dispatch_state& s)
        : chain(p),
          scratch(from.scratch),
          ex{from.req, from.res, from.remote_ip, scratch, from.env},
          st(s),
          in_flight(from.env.metrics) {
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
        detail::dispatch_answer(chain, ex, st);
        resume([self = shared_from_this()] {
            detail::dispatch_end(self->chain, self->ex, self->st);
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
        detail::dispatch_end(chain, ex, st);
        in_flight.ended();
    }
};

}  // namespace tern::detail

#include "handling/dispatch.hpp"

#include "handling/blocking.hpp"
#include "handling/context_session.hpp"
#include "handling/held_exchange.hpp"
#include "handling/request_id.hpp"
#include "handling/request_metrics.hpp"
#include "http/status.hpp"
#include "http/token.hpp"
#include "routing/url_decode.hpp"
#include "web/compression.hpp"

#include <tern/http_error.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <exception>

namespace tern::detail {

namespace {

void decode_params(const std::vector<path_param>& params, std::vector<std::string>& decoded) {
    if (decoded.size() < params.size()) decoded.resize(params.size());
    for (std::size_t i = 0; i < params.size(); ++i) {
        url_decode(params[i].value, decoded[i], false);
    }
}

// stdio, not fmt: a line that cannot be written is lost, never an exception (the failure
// policy in docs/architecture.md).
void log_failure(const exchange& ex, const char* stage, const char* what) noexcept {
    std::fprintf(stderr, "tern: %s for %.*s %.*s threw: %s\n", stage,
                 static_cast<int>(ex.req.method.size()), ex.req.method.data(),
                 static_cast<int>(ex.req.path.size()), ex.req.path.data(), what);
}

// Starts the response over for an error: nothing the failed code set (a body, a session
// cookie) goes out beside it, except the header fields set with tern::keep_on_error.
void restart_response(exchange& ex) noexcept {
    ex.res.clear();
    for (const auto& field : ex.scratch.kept_fields) ex.res.fields.push_back(field);
}

// Inside a catch block: remembers why the response is about to be an error (for
// ctx.error_cause(), error_message() and the JSON body of a validation_error) and whether
// the exception is an http_error.
bool note_current_exception(exchange& ex) noexcept {
    auto& s = ex.scratch;
    s.cause = tern::error_cause::thrown;
    s.error_message.clear();
    s.fields.clear();
    try {
        throw;
    } catch (const validation_error& e) {
        s.error_message = e.what();
        s.fields = e.errors();
        return true;
    } catch (const http_error& e) {
        s.error_message = e.what();
        return true;
    } catch (const std::exception& e) {
        s.error_message = e.what();
    } catch (...) {
    }
    return false;
}

// An http_error's status, message and header fields, each field checked as ctx.header
// checks it. False (the response left to be a 500) when one is refused.
bool answer_http_error(exchange& ex, const http_error& e) noexcept {
    set_error(ex.res, e.status(), e.what());
    try {
        context ctx(ex);
        for (const auto& [name, value] : e.headers()) ctx.header(name, value);
        return true;
    } catch (const std::exception& bad) {
        log_failure(ex, "an http_error's header", bad.what());
    }
    restart_response(ex);
    set_error(ex.res, 500, reason_phrase(500));
    return false;
}

// Inside a catch block: answers the exception being handled. The app's mappers first;
// then an http_error's status and message; anything else is a bug in the application:
// say so on stderr and answer 500 with a body that leaks nothing.
void map_current_exception(const handler_chain& p, exchange& ex, const char* stage) noexcept {
    const bool is_http_error = note_current_exception(ex);
    try {
        context ctx(ex);
        // A mapper starts from a clean response: what the failed code set so far (a body,
        // a session cookie) must not leak out beside an error.
        restart_response(ex);
        ex.res.status = 500;
        ex.app_body = false;
        if (p.exceptions.handle_current(ctx, is_http_error)) return;
    } catch (const std::exception& e) {
        log_failure(ex, "an exception mapper", e.what());
        restart_response(ex);  // nothing the failed mapper set goes out either
        set_error(ex.res, 500, reason_phrase(500));
        return;
    } catch (...) {
        log_failure(ex, "an exception mapper", "a non-std exception");
        restart_response(ex);
        set_error(ex.res, 500, reason_phrase(500));
        return;
    }
    try {
        throw;
    } catch (const http_error& e) {
        answer_http_error(ex, e);
    } catch (const std::exception& e) {
        log_failure(ex, stage, e.what());
        set_error(ex.res, 500, reason_phrase(500));
    } catch (...) {
        log_failure(ex, stage, "a non-std exception");
        set_error(ex.res, 500, reason_phrase(500));
    }
}

// Runs one filter or handler; an escaping exception is mapped into the response. False
// when it threw.
bool run(const handler_chain& p, const handler& h, exchange& ex, const char* stage) noexcept {
    try {
        context ctx(ex);
        h(ctx);
        return true;
    } catch (...) {
        if (ex.held) {
            // It threw after ctx.defer(): the exception answers, as if defer() had not been
            // called; the handle's completion is refused.
            ex.held->take_back(ex);
            ex.held.reset();
        }
        ex.app_body = false;
        map_current_exception(p, ex, stage);
        return false;
    }
}

// The static layer's answer. False when it did not claim the path.
bool answer_static(const static_files& files, exchange& ex) {
    root_cache none_kept;  // without a loop's cache: the root is opened for this request
    switch (files.serve(ex.req, ex.res, ex.env.roots != nullptr ? *ex.env.roots : none_kept)) {
        case static_outcome::not_handled:
            return false;
        case static_outcome::answered:
            ex.app_body = true;  // a file or a 304 is the answer, not an error to reshape
            ex.static_file = true;
            return true;
        case static_outcome::status_only:
            // An error or a redirect: tern's body, shaped like any other error.
            if (ex.res.status >= 400) ex.scratch.cause = tern::error_cause::static_file;
            set_error(ex.res, ex.res.status, reason_phrase(ex.res.status));
            return true;
    }
    return false;
}

// Runs filter `h`; `matched` (when not null) is its pattern, whose parameters it reads
// instead of the route's. False when it threw.
bool run_filter(const handler_chain& p, const handler& h, const path_pattern* matched, exchange& ex,
                const char* stage) noexcept {
    if (matched == nullptr) return run(p, h, ex, stage);
    auto& s = ex.scratch;
    pattern_captures(*matched, ex.req.path, s.filter_params);
    decode_params(s.filter_params, s.filter_decoded);
    ex.filter_params = true;
    const bool ok = run(p, h, ex, stage);
    ex.filter_params = false;
    return ok;
}

// The handler stage for a request `found` by the routes: the route's handler, a static
// file, or tern's 404/405/OPTIONS answer.
void answer(const handler_chain& p, exchange& ex, const router::match& found) noexcept {
    auto& res = ex.res;
    // RFC 9110 9.3.7: "OPTIONS *" asks about the server itself, not a resource. tern has
    // nothing server-wide to announce beyond answering it.
    if (ex.req.path == "*") {
        res.status = 204;
        return;
    }
    // Static files come after the routes: a route for the path and method wins.
    if (found.result != router::outcome::found && p.files && answer_static(*p.files, ex)) return;
    switch (found.result) {
        case router::outcome::found:
            ex.in_handler = true;
            run(p, *found.target, ex, "the handler");
            ex.in_handler = false;
            return;
        case router::outcome::method_not_allowed:
            // RFC 9110 9.3.7: OPTIONS describes the resource; 15.5.6: 405 lists Allow.
            if (ex.req.method == "OPTIONS") {
                res.status = 204;
                ex.app_body = true;
            } else {
                ex.scratch.cause = tern::error_cause::method_not_allowed;
                set_error(res, 405, reason_phrase(405));
            }
            res.fields.emplace_back("Allow", found.allow);
            return;
        case router::outcome::not_found:
            ex.scratch.cause = tern::error_cause::no_route;
            set_error(res, 404, reason_phrase(404));
            return;
    }
}

// Runs an error(status) handler. One that throws gives tern's own 500 (docs/errors.md):
// the exception mappers are for filters and handlers, and a mapper's answer would in turn
// need shaping. False when it threw.
bool run_error_handler(const handler& h, exchange& ex) noexcept {
    try {
        context ctx(ex);
        h(ctx);
        return true;
    } catch (const std::exception& e) {
        log_failure(ex, "an error handler", e.what());
    } catch (...) {
        log_failure(ex, "an error handler", "a non-std exception");
    }
    restart_response(ex);  // nothing the failed handler set goes out
    ex.app_body = false;
    set_error(ex.res, 500, reason_phrase(500));
    return false;
}

// The error(status) handler, or JSON rendering, for a response whose body tern made.
void shape_error(const handler_chain& p, exchange& ex) noexcept {
    auto& res = ex.res;
    if (ex.app_body || res.status < 400 || res.file.file) return;
    if (ex.scratch.cause == tern::error_cause::none)
        ex.scratch.cause = tern::error_cause::status_set;
    if (!p.errors.empty()) {
        const auto it = p.errors.find(res.status);
        if (it != p.errors.end()) {
            // Keep tern's message in view (ctx.result()) for the handler to use or replace.
            if (res.body.empty()) set_error(res, res.status, reason_phrase(res.status));
            // One that threw leaves tern's own 500, shaped below like any other.
            if (run_error_handler(it->second, ex) && ex.app_body) return;
        }
    }
    // A handler set an error status without a body: say what the status means.
    if (res.body.empty()) set_error(res, res.status, reason_phrase(res.status));
    if (prefers_json(ex.req.headers)) render_json_error(res, ex.scratch.fields);
}

// Headers that depend on the request and the final response: CORS, then compression.
void decorate(const handler_chain& p, exchange& ex, bool compress) noexcept {
    if (p.cors) p.cors->decorate(ex.req, ex.res);
    if (compress && p.compression) {
        compress_response(ex.res, ex.req.headers, *p.compression, ex.req.is_head,
                          p.stream_coders.get(), ex.env.coders);
    }
}

// Each request logger in registration order; one that throws does not stop the others.
void log_request(const handler_chain& p, exchange& ex,
                 std::chrono::steady_clock::time_point started) noexcept {
    if (p.loggers.empty()) return;
    const auto took = std::chrono::steady_clock::now() - started;
    for (const auto& logger : p.loggers) {
        try {
            const context ctx(ex);
            logger(ctx, took);
        } catch (const std::exception& e) {
            log_failure(ex, "a request logger", e.what());
        } catch (...) {
            log_failure(ex, "a request logger", "a non-std exception");
        }
    }
}

std::chrono::steady_clock::time_point start_time(const handler_chain& p,
                                                 const exchange& ex) noexcept {
    return !p.loggers.empty() || ex.env.metrics != nullptr
               ? std::chrono::steady_clock::now()
               : std::chrono::steady_clock::time_point{};
}

// Who the request is from, before anything reads it: the client's address behind trusted
// proxies, and the request's id (kept from the request when valid, else made here).
void identify(const handler_chain& p, exchange& ex) noexcept {
    // Only allocations can throw here, and out of memory inside tern is not recovered from
    // (docs/architecture.md, failures rule 3): a bad_alloc ends the process at this
    // noexcept boundary instead of serving the request as from someone else.
    auto& s = ex.scratch;
    if (p.proxies) s.client_ip = resolve_client_ip(*p.proxies, ex.remote_ip, ex.req.headers);
    if (!p.request_id_header.empty()) {
        const auto sent = ex.req.header(p.request_id_header);
        if (sent && valid_request_id(*sent)) {
            s.request_id.assign(*sent);
        } else if (ex.env.ids != nullptr) {
            ex.env.ids->next(s.request_id);
        } else {
            s.request_id.clear();
        }
    }
}

// The request id goes back on every response, errors included; it replaces one a handler
// set under the same name.
void stamp_request_id(const handler_chain& p, exchange& ex) noexcept {
    if (p.request_id_header.empty() || ex.scratch.request_id.empty()) return;
    auto& fields = ex.res.fields;
    for (auto& f : fields) {
        if (iequals(f.first, p.request_id_header)) {
            f.second = ex.scratch.request_id;
            return;
        }
    }
    fields.emplace_back(p.request_id_header, ex.scratch.request_id);  // out of memory: rule 3
}

// Where HTTP/3 is (RFC 7838), on every answer over TLS that did not come over HTTP/3.
void stamp_alt_svc(const handler_chain& p, exchange& ex) noexcept {
    if (p.alt_svc.empty() || !ex.req.secure || ex.req.version_major >= 3) return;
    ex.res.fields.emplace_back("Alt-Svc", p.alt_svc);  // out of memory: rule 3
}

// The final response, for the metrics: counted by method and status class, its time from
// the complete request to here (after compression, before the write) in the histogram.
void record(const exchange& ex, std::chrono::steady_clock::time_point started) noexcept {
    if (ex.env.metrics == nullptr) return;
    ex.env.metrics->record(ex.req.method, ex.res.status,
                           std::chrono::steady_clock::now() - started);
}

// The end of a chain that began (begin_steps): recorded, out of flight, logged.
void finish(const handler_chain& p, exchange& ex,
            std::chrono::steady_clock::time_point started) noexcept {
    stamp_request_id(p, ex);
    stamp_alt_svc(p, ex);
    if (ex.env.metrics != nullptr) {
        record(ex, started);
        ex.env.metrics->end();
    }
    log_request(p, ex, started);
}

}  // namespace

namespace {

// The steps of dispatch(), inlined there (the common path) and wrapped below for the split.
[[gnu::always_inline]] inline void begin_steps(const handler_chain& p, exchange& ex,
                                               dispatch_state& st) noexcept {
    st.started = start_time(p, ex);
    ex.res.clear();
    identify(p, ex);
    if (ex.env.metrics != nullptr) ex.env.metrics->begin();
    if (p.cors && cors_policy::is_preflight(ex.req)) {
        // Preflights carry no credentials, so they are answered before the app's filters
        // (an auth filter would refuse them) and for every path.
        p.cors->answer_preflight(ex.req, ex.res);
        finish(p, ex, st.started);
        st.done = true;
        return;
    }
    // Routed first, so that before filters see the route's path parameters.
    st.found = p.routes.find(ex.req.method, ex.req.path, ex.scratch.params);
    if (st.found.result == router::outcome::found) {
        decode_params(ex.scratch.params, ex.scratch.decoded);
    }
    if (!p.before.empty()) {
        p.before.for_each_matching(ex.req.path, [&](const handler& h, const path_pattern* m) {
            // A filter that threw has answered; one that set a result or asked to skip
            // has ended the request.
            st.proceed = run_filter(p, h, m, ex, "a before filter") && !ex.skip && !ex.app_body;
            return st.proceed;
        });
    }
}

[[gnu::always_inline]] inline void end_steps(const handler_chain& p, exchange& ex,
                                             const dispatch_state& st) noexcept {
    if (st.done) return;
    if (!p.after.empty()) {
        p.after.for_each_matching(ex.req.path, [&](const handler& h, const path_pattern* m) {
            run_filter(p, h, m, ex, "an after filter");
            return true;
        });
    }
    if (ex.session) commit_session(ex);
    shape_error(p, ex);
    decorate(p, ex, !ex.static_file);
    finish(p, ex, st.started);
    ex.scratch.attributes.clear();  // the request's values go as soon as it is answered
}

}  // namespace

void dispatch_begin(const handler_chain& p, exchange& ex, dispatch_state& st) noexcept {
    begin_steps(p, ex, st);
}

bool runs_blocking(const dispatch_state& st) noexcept {
    return !st.done && st.proceed && st.found.result == router::outcome::found &&
           is_blocking(*st.found.target);
}

void dispatch_answer(const handler_chain& p, exchange& ex, const dispatch_state& st) noexcept {
    if (!st.done && st.proceed) answer(p, ex, st.found);
}

namespace {

// ctx.defer() was called: the rest of the chain runs when the response is completed
// (dispatch_complete, on this loop), over the held exchange's own copy. False otherwise.
// Under tern::request_timeout, a timer answers it at its deadline if nothing has by then.
bool hold_if_deferred(const handler_chain& p, exchange& ex, const dispatch_state& st) noexcept {
    if (!ex.held) return false;
    auto held = std::move(ex.held);
    held->attach(p, st, *ex.port);
    const auto deadline = ex.scratch.deadline;
    if (deadline != std::chrono::steady_clock::time_point{}) {
        const auto left = std::max(deadline - std::chrono::steady_clock::now(),
                                   std::chrono::steady_clock::duration::zero());
        ex.port->door()->after(left, [weak = std::weak_ptr<held_exchange>(held),
                                      status = ex.scratch.deadline_status](bool fired) {
            if (!fired) return;  // the loop is ending: its drain answers
            if (auto h = weak.lock()) h->time_out(status);
        });
    }
    ex.port->hold(std::move(held));
    return true;
}

// tern::request_timeout's deadline passed while the handler ran on the loop (it cannot be
// interrupted there): its answer is replaced by the limit's status, unless it has begun a
// stream, whose head counts as the answer.
void replace_late_answer(exchange& ex) noexcept {
    const auto deadline = ex.scratch.deadline;
    if (deadline == std::chrono::steady_clock::time_point{} || ex.res.source ||
        std::chrono::steady_clock::now() < deadline) {
        return;
    }
    const int status = ex.scratch.deadline_status;
    restart_response(ex);
    ex.app_body = false;
    ex.scratch.cause = tern::error_cause::thrown;
    ex.scratch.error_message = "the handler did not answer within its time limit";
    set_error(ex.res, status, ex.scratch.error_message);
}

}  // namespace

void dispatch_end(const handler_chain& p, exchange& ex, const dispatch_state& st) noexcept {
    if (hold_if_deferred(p, ex, st)) return;
    if (!st.done) replace_late_answer(ex);
    end_steps(p, ex, st);
}

void dispatch(const handler_chain& p, exchange& ex) noexcept {
    dispatch_state st;
    begin_steps(p, ex, st);
    dispatch_answer(p, ex, st);
    if (hold_if_deferred(p, ex, st)) return;
    if (!st.done) replace_late_answer(ex);
    end_steps(p, ex, st);
}

void dispatch_complete(const handler_chain& p, exchange& ex, const dispatch_state& st,
                       const handler& fill, const std::exception_ptr& error,
                       bool dropped) noexcept {
    if (dropped) {
        std::fprintf(stderr,
                     "tern: the deferred response for %.*s %.*s was dropped without completing\n",
                     static_cast<int>(ex.req.method.size()), ex.req.method.data(),
                     static_cast<int>(ex.req.path.size()), ex.req.path.data());
        restart_response(ex);
        ex.app_body = false;
        ex.scratch.cause = tern::error_cause::thrown;
        ex.scratch.error_message = "the deferred response was dropped without completing";
        set_error(ex.res, 500, reason_phrase(500));
    } else if (error) {
        try {
            std::rethrow_exception(error);
        } catch (...) {
            restart_response(ex);
            ex.app_body = false;
            map_current_exception(p, ex, "a deferred response");
        }
    } else if (fill) {
        run(p, fill, ex, "a deferred response's completion");
    }
    end_steps(p, ex, st);
}

void dispatch_failure(const handler_chain& p, exchange& ex, int status,
                      std::string_view message) noexcept {
    const auto started = start_time(p, ex);
    ex.res.clear();
    ex.scratch.cause = tern::error_cause::refused;
    identify(p, ex);
    if (!message.empty()) {
        // A failure of the server's own (the spool), not of the request: said to the
        // application (ctx.error_message()), to the client and to the log.
        ex.scratch.error_message.assign(message);
        std::fprintf(stderr, "tern: %.*s %.*s answered %d: %.*s\n",
                     static_cast<int>(ex.req.method.size()), ex.req.method.data(),
                     static_cast<int>(ex.req.path.size()), ex.req.path.data(), status,
                     static_cast<int>(message.size()), message.data());
    }
    set_error(ex.res, status, message.empty() ? reason_phrase(status) : message);
    // 503: the server is short of something a retry may find (the spool's quota).
    if (status == 503) ex.res.fields.emplace_back("Retry-After", "5");
    shape_error(p, ex);
    stamp_request_id(p, ex);
    stamp_alt_svc(p, ex);
    decorate(p, ex, false);
    record(ex, started);  // never in flight: it began and ended here
    log_request(p, ex, started);
}

}  // namespace tern::detail

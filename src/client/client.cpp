// tern::client's public face and its two drivers: on an event loop, each wait of a call is a
// readiness wait of the handler's deferred response (the loop's poller watches the socket;
// no thread waits, and the handler's client leaving cancels it); on any other thread, poll(2).

#include "client/call.hpp"
#include "client/pool.hpp"
#include "http/request.hpp"
#include "http/token.hpp"

#include <tern/client.hpp>

#include "platform/socket_api.hpp"

#include <cerrno>
#include <chrono>
#include <utility>

namespace tern {

namespace detail {

namespace {

// Steps `call` until it ends, each wait on `reply`'s loop; then `done`.
void drive(const std::shared_ptr<client_call>& call, const deferred& reply,
           const std::shared_ptr<std::function<void()>>& done) {
    client_call::wait_for next;
    if (call->step(next)) {
        (*done)();
        return;
    }
    if (next.fd == platform::invalid_socket) {
        // Paused by pace: the resume (called on this loop) or its drop takes the next step.
        const auto gate = call->gate();
        {
            std::lock_guard lock(gate->mutex);
            if (!gate->resumed && !gate->dropped) {
                gate->wake = [call, reply, done] { drive(call, reply, done); };
                return;
            }
        }
        drive(call, reply, done);
        return;
    }
    auto go_on = [call, reply, done](io_ready how) {
        if (how == io_ready::timed_out) call->timed_out();
        if (how == io_ready::cancelled) call->cancel();
        drive(call, reply, done);
    };
    // Through the loop's descriptor waits, which take a descriptor: on Windows they refuse
    // every wait (docs/platforms.md), so a client call on a loop fails there.
    const auto fd = static_cast<int>(next.fd);
    if (next.write) {
        reply.when_writable(fd, next.timeout, std::move(go_on));
    } else {
        reply.when_readable(fd, next.timeout, std::move(go_on));
    }
}

// Resumes the coroutine once: when the call ends, or when the last step's function is
// dropped uncalled because the loop ended (resume_on_loop then destroys the frame).
struct resume_once {
    std::shared_ptr<coroutine_loop> loop;
    std::coroutine_handle<> h;
    resume_once(std::shared_ptr<coroutine_loop> l, std::coroutine_handle<> c)
        : loop(std::move(l)), h(c) {}
    resume_once(const resume_once&) = delete;
    resume_once& operator=(const resume_once&) = delete;
    ~resume_once() { resume_on_loop(loop, h); }
};

}  // namespace

void await_client_call(const std::shared_ptr<client_call>& call,
                       std::coroutine_handle<task::promise_type> h) {
    auto once = std::make_shared<resume_once>(h.promise().loop, h);
    // `done` lets go of its hold; the coroutine resumes when the last hold goes, which is
    // when the step that ended the call returns.
    auto done = std::make_shared<std::function<void()>>();
    *done = [once]() mutable { once.reset(); };
    auto reply = h.promise().reply;
    once.reset();  // only `done` holds it now
    drive(call, reply, done);
}

void run_on_loop(const std::shared_ptr<client_call>& call, const deferred& reply,
                 std::function<void()> done) {
    drive(call, reply, std::make_shared<std::function<void()>>(std::move(done)));
}

client_result take_client_result(client_call& call) {
    // Resumed before the call ended: a wait's function was dropped uncalled (the loop could
    // not watch the socket), so the response is failing; never an empty success.
    if (!call.ended()) call.cancel();
    return std::move(call.result);
}

}  // namespace detail

client::client(client_options options)
    : shared_(std::make_shared<detail::client_shared>(std::move(options))) {}

client_awaitable client::get(std::string url) const {
    client_request request;
    request.url = std::move(url);
    return client_awaitable(std::make_shared<detail::client_call>(shared_, std::move(request)));
}

client_awaitable client::fetch(const client_request& request) const {
    return client_awaitable(std::make_shared<detail::client_call>(shared_, request));
}

void client::fetch(const deferred& reply, client_request request,
                   std::function<void(client_result)> done) const {
    auto call = std::make_shared<detail::client_call>(shared_, std::move(request));
    auto finished = std::make_shared<std::function<void()>>(
        [call, done = std::move(done)] { done(std::move(call->result)); });
    detail::drive(call, reply, finished);
}

client_response client::fetch_blocking(client_request request) const {
    if (request.body_stream) {
        // A body_reader is read on its loop only; this thread waits with poll(2).
        throw client_error(client_failure::bad_request,
                           "fetch_blocking cannot send a body_stream (loop thread only): use "
                           "co_await fetch, fetch(reply, ...) or relay");
    }
    detail::client_call call(shared_, std::move(request));
    detail::client_call::wait_for next;
    while (!call.step(next)) {
        if (next.fd == detail::platform::invalid_socket) {
            // Paused by pace: until the resume is called (from any thread) or dropped.
            const auto& gate = call.gate();
            std::unique_lock lock(gate->mutex);
            gate->ready.wait(lock, [&] { return gate->resumed || gate->dropped; });
            continue;
        }
        int ms = -1;
        if (next.timeout.count() > 0) {
            // Rounded up: a wait never ends before its deadline.
            ms = static_cast<int>(
                std::chrono::ceil<std::chrono::milliseconds>(next.timeout).count());
        }
        const int rc = detail::platform::wait_socket(next.fd, next.write, ms);
        if (rc == 0) call.timed_out();
        if (rc < 0 && errno != EINTR) call.cancel();
    }
    if (!call.result) throw client_error(call.result.failure, call.result.message);
    return std::move(call.result.response);
}

std::size_t client::idle_connections() const { return shared_->idle_count(); }

std::optional<std::string_view> client_response::header(std::string_view name) const noexcept {
    for (const auto& [n, v] : headers) {
        if (detail::iequals(n, name)) return std::string_view(v);
    }
    return std::nullopt;
}

std::string_view describe(client_failure why) noexcept {
    switch (why) {
        case client_failure::none:
            return "no failure";
        case client_failure::bad_request:
            return "request cannot be sent";
        case client_failure::resolve_failed:
            return "host name not resolved";
        case client_failure::connect_failed:
            return "connection refused or unreachable";
        case client_failure::tls_failed:
            return "TLS handshake failed";
        case client_failure::timed_out:
            return "timed out";
        case client_failure::bad_response:
            return "malformed response";
        case client_failure::response_too_large:
            return "response too large";
        case client_failure::closed_early:
            return "connection closed before the response ended";
        case client_failure::aborted:
            return "stopped by the body's sink";
        case client_failure::cancelled:
            return "cancelled";
        case client_failure::body_stream_short:
            return "request body ended before its size";
    }
    return "unknown";
}

}  // namespace tern

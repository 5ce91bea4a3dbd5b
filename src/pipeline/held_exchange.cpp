#include "pipeline/held_exchange.hpp"

#include <cstdio>
#include <exception>
#include <utility>

namespace tern::detail {

namespace {

void run_cancel_callback(const std::function<void()>& fn) noexcept {
    if (!fn) return;
    try {
        fn();
    } catch (const std::exception& e) {
        std::fprintf(stderr, "tern: a deferred response's on_cancel callback threw: %s\n",
                     e.what());
    } catch (...) {
        std::fprintf(stderr, "tern: a deferred response's on_cancel callback threw\n");
    }
}

}  // namespace

held_exchange::held_exchange(exchange& from)
    : res_(std::move(from.res)),
      scratch_(from.scratch),
      remote_ip_(from.remote_ip),
      ex_{req_, res_, remote_ip_, scratch_, from.env},
      ctx_(ex_),
      door_(from.port->door()),
      in_flight_(from.env.meter) {
    from.res.clear();
    copy_request(from.req, req_);
    for (auto& p : scratch_.params) p.value = rebase(p.value, from.req, req_);
    scratch_.filter_params.clear();
    scratch_.parts_parsed = false;  // the parts view the old body: parsed again if asked
    // The env came whole (the held response completes on the same loop); of the request's
    // own state, the body's owner and the session go on.
    ex_.app_body = from.app_body;
    ex_.session = std::move(from.session);  // saved when the held response completes
    // ex_.port stays null: a completion cannot defer again.
}

void held_exchange::attach(const pipeline& p, const dispatch_state& st,
                           exchange_port& port) noexcept {
    pipeline_ = &p;
    st_ = st;
    port_ = &port;
}

void held_exchange::take_back(exchange& into) noexcept {
    taken_back_ = true;
    in_flight_.ended();  // the handler's own chain goes on, and counts it
    into.res = std::move(res_);
    into.session = std::move(ex_.session);
    std::function<void()> fn;
    {
        std::lock_guard lock(mutex_);
        stage_ = stage::done;
        fn = std::move(on_cancel_);
        on_cancel_ = nullptr;
    }
}

bool held_exchange::begin_completion(handler fill, std::exception_ptr error, bool dropped) {
    {
        std::lock_guard lock(mutex_);
        if (stage_ != stage::pending || cancelled()) return false;
        stage_ = stage::completing;
    }
    return door_->post([self = shared_from_this(), fill = std::move(fill), error = std::move(error),
                        dropped] { self->finish_on_loop(fill, error, dropped); });
}

bool held_exchange::complete(handler fill, std::exception_ptr error) {
    return begin_completion(std::move(fill), std::move(error), false);
}

void held_exchange::drop() noexcept { begin_completion({}, {}, true); }

void held_exchange::on_cancel(std::function<void()> fn) {
    {
        std::lock_guard lock(mutex_);
        if (stage_ == stage::done) return;
        if (!cancelled()) {
            std::swap(on_cancel_, fn);  // the one replaced is destroyed outside the lock
            return;
        }
    }
    run_cancel_callback(fn);
}

void held_exchange::abandon() noexcept {
    // Out of flight now, not when the last handle goes (which the application may keep).
    if (port_ != nullptr) in_flight_.dropped();
    port_ = nullptr;
    abandoned_.store(true, std::memory_order_release);
    std::function<void()> fn;
    {
        std::lock_guard lock(mutex_);
        fn = std::move(on_cancel_);
        on_cancel_ = nullptr;
    }
    run_cancel_callback(fn);
}

void held_exchange::finish_on_loop(const handler& fill, const std::exception_ptr& error,
                                   bool dropped) noexcept {
    std::function<void()> cancel_fn;  // let go of outside the lock: it may hold a handle
    {
        std::lock_guard lock(mutex_);
        stage_ = stage::done;
        cancel_fn = std::move(on_cancel_);
        on_cancel_ = nullptr;
    }
    // The handler threw after defer(), or the client left: nothing to send.
    if (taken_back_ || port_ == nullptr || pipeline_ == nullptr) return;
    dispatch_complete(*pipeline_, ex_, st_, fill, error, dropped);
    in_flight_.ended();
    std::exchange(port_, nullptr)->finish(std::move(res_));
}

}  // namespace tern::detail

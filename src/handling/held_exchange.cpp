#include "handling/held_exchange.hpp"

#include <tern/http_error.hpp>

#include <cstdio>
#include <exception>
#include <system_error>
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
      in_flight_(from.env.metrics) {
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

void held_exchange::attach(const handler_chain& p, const dispatch_state& st,
                           exchange_port& port) noexcept {
    chain_ = &p;
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
    // A descriptor wait ends with `cancelled` (its function is posted, not run here).
    if (auto wait = std::exchange(fd_wait_, nullptr)) wait->cancel();
    run_cancel_callback(fn);
}

void held_exchange::time_out(int status) noexcept {
    std::function<void()> fn;
    {
        std::lock_guard lock(mutex_);
        if (stage_ != stage::pending || cancelled()) return;  // answered, or the client left
        stage_ = stage::completing;                           // a completion from now on is refused
        fn = std::move(on_cancel_);
        on_cancel_ = nullptr;
    }
    abandoned_.store(true, std::memory_order_release);  // cancelled(): waits and queued work end
    if (auto wait = std::exchange(fd_wait_, nullptr)) wait->cancel();
    run_cancel_callback(fn);
    finish_on_loop({},
                   std::make_exception_ptr(
                       http_error(status, "the handler did not answer within its time limit")),
                   false);
}

void held_exchange::when_ready(int fd, bool write, std::chrono::nanoseconds timeout,
                               std::function<void(io_ready)> fn) {
    // Refused when the loop has ended: the function goes, uncalled (no response to send).
    door_->post([self = shared_from_this(), fd, write, timeout, fn = std::move(fn)]() mutable {
        self->start_fd_wait(fd, write, timeout, std::move(fn));
    });
}

void held_exchange::start_fd_wait(int fd, bool write, std::chrono::nanoseconds timeout,
                                  std::function<void(io_ready)> fn) {
    const auto self = shared_from_this();
    // The user's function runs from the loop's inbox (never inside the poller, a timer or
    // the connection's close); what it throws fails the response as a handler's would.
    auto run = [self, fn = std::move(fn)](io_ready how) {
        return [self, fn, how] {
            try {
                fn(how);
            } catch (...) {
                self->complete({}, std::current_exception());
            }
        };
    };
    if (cancelled()) {
        door_->post(run(io_ready::cancelled));
        return;
    }
    try {
        auto wait = door_->wait_fd(fd, write, timeout, [self, run](fd_wait_end how) {
            self->fd_wait_ = nullptr;
            self->door_->post(run(how == fd_wait_end::ready       ? io_ready::ready
                                  : how == fd_wait_end::timed_out ? io_ready::timed_out
                                                                  : io_ready::cancelled));
        });
        if (wait) fd_wait_ = std::move(wait);  // null: the loop has ended
    } catch (const std::system_error&) {
        complete({}, std::current_exception());  // cannot be watched: the response fails
    }
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
    // Completed while a descriptor wait was under way: it ends with `cancelled`.
    if (auto wait = std::exchange(fd_wait_, nullptr)) wait->cancel();
    // The handler threw after defer(), or the client left: nothing to send.
    if (taken_back_ || port_ == nullptr || chain_ == nullptr) return;
    dispatch_complete(*chain_, ex_, st_, fill, error, dropped);
    in_flight_.ended();
    std::exchange(port_, nullptr)->finish(std::move(res_));
}

}  // namespace tern::detail

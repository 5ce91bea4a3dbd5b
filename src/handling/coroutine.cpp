// Coroutine route handlers (include/tern/task.hpp): the route that starts one over a held
// exchange, and the resumptions on its loop (through the worker's door).

#include "handling/blocking_pool.hpp"
#include "handling/context_access.hpp"
#include "handling/held_exchange.hpp"

#include <tern/context.hpp>
#include <tern/task.hpp>

#include <memory>
#include <stdexcept>
#include <utility>

namespace tern::detail {

class coroutine_loop {
public:
    coroutine_loop(std::shared_ptr<loop_door> door, blocking_pool* pool) noexcept
        : door_(std::move(door)), pool_(pool) {}
    loop_door& door() noexcept { return *door_; }
    const std::shared_ptr<loop_door>& door_ptr() const noexcept { return door_; }
    blocking_pool* pool() const noexcept { return pool_; }

    // Loop thread. The descriptor wait under way (wait_fd), which the client's departure
    // cancels; whether that departure is watched yet, and whether it came.
    std::shared_ptr<fd_wait> waiting;
    bool watching_departure = false;
    bool departed = false;

private:
    std::shared_ptr<loop_door> door_;
    blocking_pool* pool_;  // the app's; it outlives the loops it serves
};

struct coroutine_start {
    static std::coroutine_handle<task::promise_type> release(task& t) noexcept {
        return std::exchange(t.handle_, {});
    }
};

namespace {

// A suspended coroutine on its way back to its loop. Resumed at most once; destroyed
// instead when the loop drops the resumption (it ended first), so no frame is leaked.
struct pending_resume {
    std::coroutine_handle<> handle;
    explicit pending_resume(std::coroutine_handle<> h) noexcept : handle(h) {}
    ~pending_resume() {
        if (handle) handle.destroy();
    }
    pending_resume(const pending_resume&) = delete;
    pending_resume& operator=(const pending_resume&) = delete;
    void resume() { std::exchange(handle, {}).resume(); }
};

}  // namespace

void resume_on_loop(const std::shared_ptr<coroutine_loop>& loop, std::coroutine_handle<> h) {
    auto pending = std::make_shared<pending_resume>(h);
    // Refused (the loop has ended): `pending` goes here and destroys the frame.
    if (loop) loop->door().post([pending] { pending->resume(); });
}

void resume_after(const std::shared_ptr<coroutine_loop>& loop, std::chrono::nanoseconds delay,
                  std::coroutine_handle<> h) {
    auto pending = std::make_shared<pending_resume>(h);
    loop->door().after(delay, [pending](bool fired) {
        if (fired) pending->resume();
    });
}

bool run_on_pool(const std::shared_ptr<coroutine_loop>& loop, std::function<void()> job,
                 std::function<void()> late, std::coroutine_handle<> h) {
    blocking_pool* pool = loop ? loop->pool() : nullptr;
    if (pool == nullptr) return false;
    auto pending = std::make_shared<pending_resume>(h);
    // Either runs on a pool thread (`late` when the job waited past max_blocking_wait), then
    // resumes the coroutine on its loop; refused when the loop has ended: `pending` then
    // destroys the frame here.
    const auto then_resume = [pending, door = loop->door_ptr()](const std::function<void()>& fn) {
        fn();  // catches what the user's function throws (task.hpp)
        door->post([pending] { pending->resume(); });
    };
    const bool queued = pool->submit(
        pool->new_ticket(), [job = std::move(job), then_resume] { then_resume(job); },
        [late = std::move(late), then_resume] { then_resume(late); });
    if (!queued) pending->handle = {};  // not ours to destroy: the caller resumes it
    return queued;
}

bool wait_fd(const std::shared_ptr<coroutine_loop>& loop, const deferred& reply, int fd, bool write,
             std::chrono::nanoseconds timeout, std::coroutine_handle<> h, io_ready& out) {
    if (!loop || !loop->door_ptr()) throw std::logic_error("tern: no event loop to wait on");
    if (!loop->watching_departure) {
        // Watched from the first wait on: the departure cancels the wait under way. Runs on
        // the loop (deferred::on_cancel); the coroutine_loop lives as long as the frame.
        loop->watching_departure = true;
        reply.on_cancel([weak = std::weak_ptr<coroutine_loop>(loop)] {
            const auto l = weak.lock();
            if (!l) return;
            l->departed = true;
            if (auto w = std::exchange(l->waiting, nullptr)) w->cancel();
        });
    }
    if (loop->departed || reply.cancelled()) {
        out = io_ready::cancelled;
        return false;  // not suspended: the co_await goes on at once
    }
    // The handle is given to `pending` only once the loop has taken the wait: a refusal
    // (the loop has ended) or a throw then leaves the frame to the caller.
    auto pending = std::make_shared<pending_resume>(std::coroutine_handle<>{});
    auto* raw = loop.get();
    auto wait = loop->door().wait_fd(fd, write, timeout, [raw, pending, &out](fd_wait_end how) {
        raw->waiting = nullptr;
        out = how == fd_wait_end::ready       ? io_ready::ready
              : how == fd_wait_end::timed_out ? io_ready::timed_out
                                              : io_ready::cancelled;
        // Resumed from the loop's inbox, never inside the poller, a timer or the
        // connection's close: the coroutine may start another wait or answer.
        raw->door().post([pending] { pending->resume(); });
    });
    if (!wait) {
        out = io_ready::cancelled;  // the loop has ended
        return false;
    }
    pending->handle = h;
    loop->waiting = std::move(wait);
    return true;
}

std::function<void(context&)> coroutine_route(std::function<task(context&)> f) {
    return [f = std::move(f)](context& ctx) {
        auto& ex = context_access::of(ctx);
        std::shared_ptr<loop_door> door = ex.port != nullptr ? ex.port->door() : nullptr;
        auto reply = ctx.defer();  // refused (logic_error) where a handler may not defer
        // The coroutine gets the held exchange's own context: it lives as long as the reply.
        task t = f(ex.held->ctx());
        auto h = coroutine_start::release(t);
        auto& promise = h.promise();
        promise.reply = std::move(reply);
        promise.loop = std::make_shared<coroutine_loop>(std::move(door), ex.env.pool);
        h.resume();  // runs to its first suspension here, on the loop
    };
}

}  // namespace tern::detail

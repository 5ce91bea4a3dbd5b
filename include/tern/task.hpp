#pragma once
/// @file task.hpp
/// Coroutine handlers: a route handler may be a C++20 coroutine returning `tern::task`, and
/// `co_await` a timer (`tern::sleep_for`), a callback-style operation
/// (`tern::callback_result`) or work on another thread. It runs on its connection's event
/// loop between suspensions and holds no thread while suspended (docs/async.md).
///
///     app.get("/later", [](tern::context& ctx) -> tern::task {
///         co_await tern::sleep_for(std::chrono::milliseconds(100));
///         ctx.text("later");
///     });

#include <tern/deferred.hpp>
#include <tern/export.hpp>
#include <tern/http_error.hpp>

#include <chrono>
#include <concepts>
#include <coroutine>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <type_traits>
#include <utility>

namespace tern {

class context;

namespace detail {
/// The event loop a coroutine handler runs on (defined in libtern).
class coroutine_loop;
/// Runs `h` on `loop`'s thread (from any thread); destroys it instead when the loop has
/// ended (its server stopped), so its frame is never leaked nor resumed elsewhere.
TERN_API void resume_on_loop(const std::shared_ptr<coroutine_loop>& loop,
                             std::coroutine_handle<> h);
/// On `loop`'s thread: resumes `h` there after `delay` (destroys it if the loop ends first).
TERN_API void resume_after(const std::shared_ptr<coroutine_loop>& loop,
                           std::chrono::nanoseconds delay, std::coroutine_handle<> h);
/// Queues `job` on the app's blocking pool, then resumes `h` on `loop`'s thread; `late`
/// runs instead of `job` when it waited past `max_blocking_wait`. False when it was not
/// queued (no pool, or `max_blocking_queue` jobs wait): the caller resumes `h`.
TERN_API bool run_on_pool(const std::shared_ptr<coroutine_loop>& loop, std::function<void()> job,
                          std::function<void()> late, std::coroutine_handle<> h);
struct coroutine_start;
}  // namespace detail

namespace detail {
/// On the coroutine's loop: watches `fd` for reading (writing when `write`), then resumes
/// `h` there with the outcome in `out`. False when it did not suspend (`out` is set: the
/// client had left); throws std::system_error when the descriptor cannot be watched.
TERN_API bool wait_fd(const std::shared_ptr<coroutine_loop>& loop, const deferred& reply, int fd,
                      bool write, std::chrono::nanoseconds timeout, std::coroutine_handle<> h,
                      io_ready& out);
}  // namespace detail

/// The return type of a coroutine route handler. tern starts it, on the connection's event
/// loop, after `ctx.defer()`: when the coroutine returns, the response is complete (the
/// rest of the chain runs and it is sent); an exception escaping it is mapped like a
/// handler's. The `context&` it receives stays valid until it returns.
class task {
public:
    /// The coroutine's promise (for the compiler and tern's awaitables).
    struct promise_type {
        deferred reply;                                ///< completed when the coroutine ends
        std::shared_ptr<detail::coroutine_loop> loop;  ///< where it runs
        std::exception_ptr error;                      ///< what escaped it, if anything

        /// The task object handed to tern.
        task get_return_object() noexcept {
            return task(std::coroutine_handle<promise_type>::from_promise(*this));
        }
        /// tern starts the coroutine once it holds the request.
        std::suspend_always initial_suspend() noexcept { return {}; }
        /// Completes the response (or fails it), then lets the frame go.
        struct final_awaiter {
            /// Always suspends, to complete and destroy the frame.
            bool await_ready() const noexcept { return false; }
            /// Completes or fails the response, then destroys the frame.
            void await_suspend(std::coroutine_handle<promise_type> h) noexcept {
                auto& p = h.promise();
                if (p.error) {
                    p.reply.fail(p.error);
                } else {
                    p.reply.complete();
                }
                h.destroy();
            }
            /// Never resumed.
            void await_resume() const noexcept {}
        };
        /// See final_awaiter.
        final_awaiter final_suspend() noexcept { return {}; }
        /// The coroutine ended normally.
        void return_void() noexcept {}
        /// Kept, to be mapped like a handler's exception.
        void unhandled_exception() noexcept { error = std::current_exception(); }
    };

    /// Takes over `other`'s coroutine (tern does, to start it).
    task(task&& other) noexcept : handle_(std::exchange(other.handle_, {})) {}
    /// Takes over `other`'s coroutine; one held before is destroyed unstarted.
    task& operator=(task&& other) noexcept {
        if (this != &other) {
            if (handle_) handle_.destroy();
            handle_ = std::exchange(other.handle_, {});
        }
        return *this;
    }
    /// A task never started (not given to tern) is destroyed without running.
    ~task() {
        if (handle_) handle_.destroy();
    }
    task(const task&) = delete;
    task& operator=(const task&) = delete;

private:
    friend struct detail::coroutine_start;
    explicit task(std::coroutine_handle<promise_type> h) noexcept : handle_(h) {}
    std::coroutine_handle<promise_type> handle_;
};

/// `co_await tern::sleep_for(d)`: resumes the coroutine on its event loop after `d`,
/// holding no thread meanwhile.
struct sleep_for {
    /// The wait.
    std::chrono::nanoseconds delay;
    /// Sleeps for `d`.
    explicit sleep_for(std::chrono::nanoseconds d) noexcept : delay(d) {}
    /// No wait for a zero or negative delay.
    bool await_ready() const noexcept { return delay.count() <= 0; }
    /// Arms a timer on the coroutine's loop.
    void await_suspend(std::coroutine_handle<task::promise_type> h) const {
        detail::resume_after(h.promise().loop, delay, h);
    }
    /// Nothing to return.
    void await_resume() const noexcept {}
};

namespace detail {
/// What wait_readable and wait_writable share: the wait for one direction of a descriptor.
template <bool Write>
struct fd_awaiter {
    int fd;                              ///< the descriptor
    std::chrono::nanoseconds timeout;    ///< zero or less: none
    io_ready outcome = io_ready::ready;  ///< how the wait ended (set before resuming)
    /// Waits for `f`, at most `t`.
    explicit fd_awaiter(int f, std::chrono::nanoseconds t) noexcept : fd(f), timeout(t) {}
    /// Always asks the loop (it says at once when the descriptor is ready already).
    bool await_ready() const noexcept { return false; }
    /// Watches the descriptor.
    bool await_suspend(std::coroutine_handle<task::promise_type> h) {
        auto& p = h.promise();
        return wait_fd(p.loop, p.reply, fd, Write, timeout, h, outcome);
    }
    /// How the wait ended.
    io_ready await_resume() const noexcept { return outcome; }
};
}  // namespace detail

/// `co_await tern::wait_readable(fd, timeout)`: resumes the coroutine on its event loop once
/// `fd` (a descriptor the application owns, in non-blocking mode: a database client's
/// socket, a pipe) is readable, after `timeout` (zero: none), or when the client leaves,
/// holding no thread meanwhile. What lets a C client with a non-blocking mode (libpq,
/// hiredis, c-ares) run on the loop. A descriptor that cannot be polled (a regular file)
/// throws std::system_error at the `co_await`. The descriptor stays the application's: it is never
/// read or closed, and tern waits on a duplicate of its own, so the application may close it during
/// the wait (the wait then ends as it would have; docs/async.md).
///
///     for (;;) {
///         PQconsumeInput(conn);
///         if (!PQisBusy(conn)) break;
///         if (co_await tern::wait_readable(PQsocket(conn), 2s) != tern::io_ready::ready) {
///             throw tern::http_error(504, "the database did not answer");
///         }
///     }
struct wait_readable : detail::fd_awaiter<false> {
    /// Waits for `fd` to be readable, at most `t`.
    explicit wait_readable(int f, std::chrono::nanoseconds t = {}) noexcept : fd_awaiter(f, t) {}
};

/// `co_await tern::wait_writable(fd, timeout)`: as wait_readable, until `fd` has room to
/// write (a non-blocking connect has completed, a full socket buffer has drained).
struct wait_writable : detail::fd_awaiter<true> {
    /// Waits for `fd` to be writable, at most `t`.
    explicit wait_writable(int f, std::chrono::nanoseconds t = {}) noexcept : fd_awaiter(f, t) {}
};

/// Called once, from any thread, with the result of an operation a coroutine awaits
/// through `callback_result` (copies share one result; later calls are ignored).
template <class T>
class resume_with;

namespace detail {
template <class T>
struct callback_state {
    std::mutex mutex;
    std::optional<T> value;
    bool done = false;
    std::coroutine_handle<> handle;
    std::shared_ptr<coroutine_loop> loop;

    // Hands `v` over and resumes the coroutine on its loop (once).
    void deliver(std::optional<T> v) {
        {
            std::lock_guard lock(mutex);
            if (done) return;
            done = true;
            value = std::move(v);
        }
        resume_on_loop(loop, handle);
    }
};
// Shared by the copies of one resume_with: when the last goes uncalled, the coroutine
// resumes with an error instead of waiting forever.
template <class T>
struct callback_token {
    std::shared_ptr<callback_state<T>> state;
    explicit callback_token(std::shared_ptr<callback_state<T>> s) noexcept : state(std::move(s)) {}
    ~callback_token() { state->deliver(std::nullopt); }
    callback_token(const callback_token&) = delete;
    callback_token& operator=(const callback_token&) = delete;
};
}  // namespace detail

template <class T>
class resume_with {
public:
    /// Delivers `value`: the coroutine resumes with it on its own loop.
    void operator()(T value) const { token_->state->deliver(std::move(value)); }

    /// Built by callback_result.
    explicit resume_with(std::shared_ptr<detail::callback_state<T>> s)
        : token_(std::make_shared<detail::callback_token<T>>(std::move(s))) {}

private:
    std::shared_ptr<detail::callback_token<T>> token_;
};

/// `co_await tern::callback_result<T>(start)`: calls `start(done)` with a `resume_with<T>`
/// that the operation calls, from any thread, with its result; the coroutine resumes on its
/// loop with that value. When every copy of `done` is dropped uncalled, the `co_await`
/// throws std::runtime_error (a 500 unless mapped), never a request waiting forever.
///
///     auto user = co_await tern::callback_result<std::optional<row>>(
///         [&](auto done) { lookup_user_async(id, done); });
template <class T>
class callback_result {
public:
    /// `start(resume_with<T>)` begins the operation.
    explicit callback_result(std::function<void(resume_with<T>)> start)
        : start_(std::move(start)), state_(std::make_shared<detail::callback_state<T>>()) {}

    /// Never ready before it starts.
    bool await_ready() const noexcept { return false; }
    /// Starts the operation; the coroutine resumes when it delivers.
    void await_suspend(std::coroutine_handle<task::promise_type> h) {
        state_->handle = h;
        state_->loop = h.promise().loop;
        start_(resume_with<T>(state_));
    }
    /// The delivered value.
    T await_resume() {
        std::lock_guard lock(state_->mutex);
        if (!state_->value) {
            throw std::runtime_error("tern: an awaited callback was dropped without being called");
        }
        return std::move(*state_->value);
    }

private:
    std::function<void(resume_with<T>)> start_;
    std::shared_ptr<detail::callback_state<T>> state_;
};

/// `co_await tern::on_blocking_pool(fn)`: runs `fn` on the app's blocking pool (the threads
/// of `tern::blocking`), then resumes the coroutine on its loop with what `fn` returned; an
/// exception `fn` throws is rethrown at the `co_await`. When `max_blocking_queue` jobs
/// already wait, or `fn` waited for a thread past `max_blocking_wait`, the `co_await` throws
/// http_error 503 and `fn` does not run.
///
///     const auto rows = co_await tern::on_blocking_pool([&] { return db.query(sql); });
template <class T>
class on_blocking_pool {
public:
    /// `fn` is run on a pool thread.
    template <class F>
    explicit on_blocking_pool(F fn) : state_(std::make_shared<state>()) {
        state_->fn = std::move(fn);
    }
    /// Never ready before it runs.
    bool await_ready() const noexcept { return false; }
    /// Queues `fn`; the coroutine resumes when it has run.
    void await_suspend(std::coroutine_handle<task::promise_type> h) {
        auto st = state_;
        const bool queued = detail::run_on_pool(
            h.promise().loop,
            [st] {
                try {
                    if constexpr (std::is_void_v<T>) {
                        st->fn();
                        st->value.emplace();
                    } else {
                        st->value.emplace(st->fn());
                    }
                } catch (...) {
                    st->error = std::current_exception();
                }
            },
            [st] { st->refused = true; }, h);
        if (!queued) {
            st->refused = true;
            detail::resume_on_loop(h.promise().loop, h);
        }
    }
    /// What `fn` returned.
    T await_resume() {
        if (state_->refused) throw http_error(503, "the blocking pool is overloaded");
        if (state_->error) std::rethrow_exception(state_->error);
        if constexpr (!std::is_void_v<T>) return std::move(*state_->value);
    }

private:
    struct unit {};
    using stored = std::conditional_t<std::is_void_v<T>, unit, T>;
    struct state {
        std::function<T()> fn;
        std::optional<stored> value;
        std::exception_ptr error;
        bool refused = false;
    };
    std::shared_ptr<state> state_;
};
/// Deduces T from the function: `co_await tern::on_blocking_pool([] { return 42; })`.
template <class F>
on_blocking_pool(F) -> on_blocking_pool<std::invoke_result_t<F&>>;

namespace detail {
/// What a coroutine route handler is: callable with `context&`, returning tern::task.
template <class F>
concept coroutine_handler = std::is_invocable_r_v<task, F&, context&> &&
    std::same_as<std::invoke_result_t<F&, context&>, task>;
/// The route handler that starts a coroutine handler (defined in libtern).
TERN_API std::function<void(context&)> coroutine_route(std::function<task(context&)> f);
}  // namespace detail

}  // namespace tern

#pragma once
// Work the application runs on the app's event loops outside a request (app::post, post_all,
// every; docs/loop-work.md): what waits for the loops before the start, the loops' doors
// while the server runs, and the stop that ends it all. Each function goes in through a
// loop's door (http/exchange_port.hpp loop_door) and runs on that loop's thread; a
// repeating task arms the loop's own timers, one run at a time.

#include "http/exchange_port.hpp"

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

namespace tern::detail {

/// One start's loop work: open until its stop begins, then closed for good (the next start
/// makes another). What a loop runs checks it first, so nothing starts once the stop has
/// begun.
struct loop_run {
    std::atomic<bool> closed{false};
};

/// A task of app::every, shared by its handles and the timer that runs it next.
struct repeating_state {
    repeating_state(std::chrono::nanoseconds every, std::function<void()> f,
                    std::shared_ptr<loop_run> r)
        : interval(every), fn(std::move(f)), run(std::move(r)) {}

    const std::chrono::nanoseconds interval;
    // Before the start, touched under loop_work's mutex; once started, on its loop only.
    std::function<void()> fn;
    const std::shared_ptr<loop_run> run;

    std::mutex mutex;
    bool cancelled = false;             // under mutex
    std::shared_ptr<loop_door> door{};  // its loop's, once started (under mutex)

    /// Whether a run may start now: not cancelled, and the stop not begun.
    bool may_run() {
        std::lock_guard lock(mutex);
        return !cancelled && !run->closed.load(std::memory_order_acquire);
    }
};

/// The app's loop work (one per app; its members are thread-safe).
class loop_work {
public:
    loop_work() = default;
    loop_work(const loop_work&) = delete;
    loop_work& operator=(const loop_work&) = delete;

    /// app::post (`all`: post_all). Throws std::invalid_argument for an empty `fn`.
    bool post(std::function<void()> fn, bool all);
    /// app::every. Throws std::invalid_argument for an interval of zero or less, or an empty
    /// `fn`.
    std::shared_ptr<repeating_state> every(std::chrono::nanoseconds interval,
                                           std::function<void()> fn);
    /// At start, once the loops exist (their threads may not run yet): what waited for them
    /// goes in, in the order it came. After a stop, a fresh run begins first.
    void open(std::vector<std::shared_ptr<loop_door>> doors);
    /// A stop has begun (any thread; idempotent): no function or run starts from now on.
    /// Ignored before `open` (a server whose start failed is stopped too: what waits for the
    /// loops waits on for the next start).
    void close() noexcept;
    /// The app ends: as `close`, and what waited for the loops is dropped.
    void end() noexcept;

private:
    struct waiting {
        std::function<void()> fn;
        bool all = false;
    };
    // Under mutex_: the door of the next loop in turn.
    std::shared_ptr<loop_door>& next_door();
    static bool post_to(loop_door& door, std::shared_ptr<loop_run> run, std::function<void()> fn);

    std::mutex mutex_;
    std::shared_ptr<loop_run> run_ = std::make_shared<loop_run>();
    std::vector<std::shared_ptr<loop_door>> doors_;  // empty unless running
    bool opened_ = false;                            // between open and close
    std::size_t next_ = 0;
    std::vector<waiting> waiting_;                             // posts before the start
    std::vector<std::shared_ptr<repeating_state>> unstarted_;  // tasks before the start
};

/// Loop thread: arms `task`'s first run one interval from now.
void start_repeating(const std::shared_ptr<repeating_state>& task);

}  // namespace tern::detail

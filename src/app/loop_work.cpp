// app::post, post_all and every (docs/loop-work.md): functions and repeating tasks run on the
// app's event loops, outside any request.

#include "app/loop_work.hpp"

#include "app/app_impl.hpp"

#include <algorithm>
#include <cstdio>
#include <exception>
#include <stdexcept>
#include <utility>

namespace tern {

namespace detail {

namespace {

using clock_type = std::chrono::steady_clock;

// The application's code may throw anything (docs/architecture.md, failures rule 1): what it
// throws is reported on stderr, as a handler's uncaught exception is, and the loop goes on.
void call_logged(const std::function<void()>& fn, const char* what) noexcept {
    try {
        fn();
    } catch (const std::exception& e) {
        std::fprintf(stderr, "tern: %s threw: %s\n", what, e.what());
    } catch (...) {
        std::fprintf(stderr, "tern: %s threw a non-std exception\n", what);
    }
}

void arm(const std::shared_ptr<repeating_state>& task, clock_type::time_point due);

// Loop thread: the timer of `task` for the run due at `due` went off (`fired`), or was
// cancelled because the loop's drain ended.
void fire(const std::shared_ptr<repeating_state>& task, clock_type::time_point due, bool fired) {
    if (!fired || !task->may_run()) {
        task->fn = nullptr;  // its captures go now, on its loop
        return;
    }
    call_logged(task->fn, "a repeating task (app::every)");
    if (!task->may_run()) {
        task->fn = nullptr;
        return;
    }
    // On the cadence while it keeps up; after a run (or a busy loop) that made it miss its
    // next time, one interval from now: late runs are not made up in a burst.
    auto next = due + task->interval;
    const auto now = clock_type::now();
    if (next <= now) next = now + task->interval;
    arm(task, next);
}

void arm(const std::shared_ptr<repeating_state>& task, clock_type::time_point due) {
    const auto delay = std::max(due - clock_type::now(), clock_type::duration::zero());
    std::shared_ptr<loop_door> door;
    {
        std::lock_guard lock(task->mutex);
        door = task->door;
    }
    door->after(delay, [task, due](bool fired) { fire(task, due, fired); });
}

}  // namespace

void start_repeating(const std::shared_ptr<repeating_state>& task) {
    if (!task->may_run()) {
        task->fn = nullptr;
        return;
    }
    arm(task, clock_type::now() + task->interval);
}

bool loop_work::post_to(loop_door& door, std::shared_ptr<loop_run> run, std::function<void()> fn) {
    return door.post([run = std::move(run), fn = std::move(fn)] {
        // A function that had not started when the stop began is dropped.
        if (run->closed.load(std::memory_order_acquire)) return;
        call_logged(fn, "a function posted to a loop (app::post)");
    });
}

std::shared_ptr<loop_door>& loop_work::next_door() {
    auto& door = doors_[next_ % doors_.size()];
    ++next_;
    return door;
}

bool loop_work::post(std::function<void()> fn, bool all) {
    if (!fn) throw std::invalid_argument("tern: post: an empty function");
    std::shared_ptr<loop_run> run;
    std::vector<std::shared_ptr<loop_door>> to;
    {
        std::lock_guard lock(mutex_);
        if (run_->closed.load(std::memory_order_relaxed)) return false;
        if (doors_.empty()) {
            waiting_.push_back({std::move(fn), all});
            return true;
        }
        run = run_;
        if (all) {
            to = doors_;
        } else {
            to.push_back(next_door());
        }
    }
    // Posted outside the lock: a door that refuses (its loop has ended) destroys the function
    // at once, and what it captures may post again.
    bool posted = true;
    for (std::size_t i = 0; i + 1 < to.size(); ++i) posted = post_to(*to[i], run, fn) && posted;
    return post_to(*to.back(), run, std::move(fn)) && posted;  // `to` has one door or more
}

std::shared_ptr<repeating_state> loop_work::every(std::chrono::nanoseconds interval,
                                                  std::function<void()> fn) {
    if (interval <= std::chrono::nanoseconds::zero()) {
        throw std::invalid_argument("tern: every: the interval must be more than zero");
    }
    if (!fn) throw std::invalid_argument("tern: every: an empty function");
    std::shared_ptr<repeating_state> task;
    std::shared_ptr<loop_door> door;
    {
        std::lock_guard lock(mutex_);
        task = std::make_shared<repeating_state>(interval, std::move(fn), run_);
        if (run_->closed.load(std::memory_order_relaxed)) {
            // Never runs: its handle says so (not active); the function goes below.
        } else if (doors_.empty()) {
            unstarted_.push_back(task);
            return task;
        } else {
            door = next_door();
        }
    }
    if (!door) {
        task->fn = nullptr;
        return task;
    }
    {
        std::lock_guard task_lock(task->mutex);
        task->door = door;
    }
    // Refused only when the loop has ended, which a stop (closing the run) comes before.
    door->post([task] { start_repeating(task); });
    return task;
}

void loop_work::open(std::vector<std::shared_ptr<loop_door>> doors) {
    std::lock_guard lock(mutex_);
    if (run_->closed.load(std::memory_order_relaxed)) run_ = std::make_shared<loop_run>();
    doors_ = std::move(doors);
    next_ = 0;
    opened_ = !doors_.empty();
    if (!opened_) return;
    for (auto& w : std::exchange(waiting_, {})) {
        if (!w.all) {
            post_to(*next_door(), run_, std::move(w.fn));
            continue;
        }
        for (auto& door : doors_) post_to(*door, run_, w.fn);
    }
    for (auto& task : std::exchange(unstarted_, {})) {
        auto& door = next_door();
        {
            std::lock_guard task_lock(task->mutex);
            if (task->cancelled) {
                task->fn = nullptr;
                continue;
            }
            task->door = door;
        }
        door->post([task] { start_repeating(task); });
    }
}

void loop_work::close() noexcept {
    std::lock_guard lock(mutex_);
    if (!opened_) return;
    opened_ = false;
    run_->closed.store(true, std::memory_order_release);
    doors_.clear();
}

void loop_work::end() noexcept {
    std::vector<waiting> posts;
    std::vector<std::shared_ptr<repeating_state>> tasks;
    {
        std::lock_guard lock(mutex_);
        opened_ = false;
        run_->closed.store(true, std::memory_order_release);
        doors_.clear();
        posts.swap(waiting_);
        tasks.swap(unstarted_);
    }
    // What waited is destroyed here, outside the lock: its captures may be handles that post.
    for (auto& task : tasks) {
        std::function<void()> fn;
        {
            std::lock_guard task_lock(task->mutex);
            fn.swap(task->fn);
        }
    }
}

}  // namespace detail

// ---- the public side -----------------------------------------------------------------------

void repeating_task::cancel() noexcept {
    if (!state_) return;
    std::shared_ptr<detail::loop_door> door;
    {
        std::lock_guard lock(state_->mutex);
        if (state_->cancelled) return;
        state_->cancelled = true;
        door = state_->door;
    }
    if (!door) return;  // not started: the start (or the app's end) lets go of the function
    // The function's captures are let go on its loop now rather than at its next time, which
    // may be far off. Refused when the loop has ended: its timer is gone, and the function with
    // the last handle.
    try {
        door->post([task = state_] { task->fn = nullptr; });
    } catch (...) {
        // Out of memory for the message: the next time due lets go of the function instead.
    }
}

bool repeating_task::active() const noexcept {
    if (!state_) return false;
    std::lock_guard lock(state_->mutex);
    return !state_->cancelled && !state_->run->closed.load(std::memory_order_acquire);
}

repeating_task app::every(std::chrono::milliseconds interval, std::function<void()> fn) {
    return repeating_task(impl_->loop_tasks.every(interval, std::move(fn)));
}

bool app::post(std::function<void()> fn) { return impl_->loop_tasks.post(std::move(fn), false); }

bool app::post_all(std::function<void()> fn) { return impl_->loop_tasks.post(std::move(fn), true); }

}  // namespace tern

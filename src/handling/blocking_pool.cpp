#include "handling/blocking_pool.hpp"

#include <algorithm>
#include <system_error>

namespace tern::detail {

namespace {
thread_local const blocking_pool* current_pool = nullptr;
}  // namespace

blocking_pool::blocking_pool(unsigned threads, std::size_t max_waiting,
                             std::chrono::nanoseconds max_wait)
    : max_waiting_(std::max<std::size_t>(max_waiting, 1)),
      max_wait_(max_wait),
      max_threads_(std::max(threads, 1u)) {}

blocking_pool::~blocking_pool() { join_all(); }

void blocking_pool::join_all() noexcept {
    std::vector<std::thread> all;
    {
        std::lock_guard lock(mutex_);
        stopping_ = true;
        all = std::move(threads_);
    }
    ready_.notify_all();
    for (auto& t : all) t.join();
}

bool blocking_pool::submit(ticket id, std::function<void()> job, std::function<void()> late) {
    {
        std::lock_guard lock(mutex_);
        if (stopping_ || jobs_.size() >= max_waiting_) return false;
        jobs_.push_back({id, std::move(job), std::move(late), std::chrono::steady_clock::now()});
        // More jobs than idle threads to take them: one more thread, up to the limit.
        if (jobs_.size() > idle_ && threads_.size() < max_threads_) {
            try {
                threads_.emplace_back([this] { run(); });
            } catch (const std::system_error&) {
                // Out of threads: the ones running take the job; with none, it is refused.
                if (threads_.empty()) {
                    jobs_.pop_back();
                    return false;
                }
            }
        }
    }
    ready_.notify_one();
    return true;
}

std::size_t blocking_pool::waiting() {
    std::lock_guard lock(mutex_);
    return jobs_.size();
}

bool blocking_pool::cancel(ticket id) noexcept {
    std::function<void()> taken;  // destroyed after the lock is released
    std::function<void()> taken_late;
    {
        std::lock_guard lock(mutex_);
        // At most max_waiting_ entries; cancelling is the rare path (a client that left, a
        // stop), so a linear search keeps the common path free of an index.
        const auto it = std::find_if(jobs_.begin(), jobs_.end(),
                                     [id](const auto& entry) { return entry.id == id; });
        if (it == jobs_.end()) return false;
        taken = std::move(it->job);
        taken_late = std::move(it->late);
        jobs_.erase(it);
    }
    return true;
}

bool blocking_pool::on_pool_thread() const noexcept { return current_pool == this; }

void blocking_pool::run() {
    current_pool = this;
    for (;;) {
        queued next;
        {
            std::unique_lock lock(mutex_);
            ++idle_;
            ready_.wait(lock, [this] { return stopping_ || !jobs_.empty(); });
            --idle_;
            if (jobs_.empty()) return;  // stopping, and nothing left to run
            next = std::move(jobs_.front());
            jobs_.pop_front();
        }
        // Waited past max_wait_: the pool is overloaded, and an answer this late helps no
        // one; the job's `late` answers it at once instead.
        if (next.late && max_wait_.count() > 0 &&
            std::chrono::steady_clock::now() - next.since > max_wait_) {
            next.late();
        } else {
            next.job();
        }
    }
}

}  // namespace tern::detail

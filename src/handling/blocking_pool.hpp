#pragma once
// The threads blocking handlers run on: a fixed pool with one bounded queue, in arrival
// order. A job that has not started can be taken back out of the queue; one that waited
// past the pool's longest wait gets its `late` function instead of running.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

namespace tern::detail {

class blocking_pool {
public:
    /// Identifies a queued job (never 0).
    using ticket = std::uint64_t;

    /// Up to `threads` threads (at least one), started as jobs need them: a job that finds
    /// no idle thread starts one, so an app whose handlers never reach the pool has no pool
    /// thread. At most `max_waiting` jobs (at least one) wait for a thread at a time. A job
    /// taken after waiting longer than `max_wait` (zero: no bound) runs its `late` function
    /// instead, when it has one.
    blocking_pool(unsigned threads, std::size_t max_waiting,
                  std::chrono::nanoseconds max_wait = {});
    /// Runs every job already queued, then joins the threads.
    ~blocking_pool();
    blocking_pool(const blocking_pool&) = delete;
    blocking_pool& operator=(const blocking_pool&) = delete;

    /// A new ticket for `submit` (any thread).
    ticket new_ticket() noexcept { return next_ticket_.fetch_add(1, std::memory_order_relaxed); }
    /// Queues `job` under `id` (from any thread). False, and `job` is not queued, when
    /// `max_waiting` jobs already wait, or when no thread runs and none can be started.
    /// When a thread takes it after `max_wait`, `late` (when given) runs there instead of
    /// `job`. Neither may throw.
    bool submit(ticket id, std::function<void()> job, std::function<void()> late = {});
    /// Takes the job `id` back out of the queue (from any thread): true when it was still
    /// waiting, and then it never runs (it is destroyed on the calling thread); false when a
    /// thread has taken it (it runs or has run) or it was never queued.
    bool cancel(ticket id) noexcept;
    /// Jobs waiting for a thread now (any thread; takes the queue's lock).
    std::size_t waiting();
    /// Whether the calling thread is one of this pool's.
    bool on_pool_thread() const noexcept;

private:
    void run();
    void join_all() noexcept;

    std::mutex mutex_;
    std::condition_variable ready_;
    struct queued {
        ticket id = 0;
        std::function<void()> job;
        std::function<void()> late;
        std::chrono::steady_clock::time_point since;
    };
    std::deque<queued> jobs_;  // waiting, in arrival order
    std::size_t max_waiting_;
    std::chrono::nanoseconds max_wait_;
    std::atomic<ticket> next_ticket_{1};
    bool stopping_ = false;
    unsigned max_threads_;
    std::size_t idle_ = 0;  // threads waiting for a job (not yet handed one)
    std::vector<std::thread> threads_;
};

}  // namespace tern::detail

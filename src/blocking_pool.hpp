#pragma once
// The threads blocking handlers run on: a fixed pool with one queue, in arrival order.

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace tern::detail {

class blocking_pool {
public:
    /// Starts `threads` threads (at least one).
    explicit blocking_pool(unsigned threads);
    /// Runs every job already queued, then joins the threads.
    ~blocking_pool();
    blocking_pool(const blocking_pool&) = delete;
    blocking_pool& operator=(const blocking_pool&) = delete;

    /// Queues `job` (from any thread). A job must not throw.
    void submit(std::function<void()> job);
    /// Whether the calling thread is one of this pool's.
    bool on_pool_thread() const noexcept;

private:
    void run();
    void join_all() noexcept;

    std::mutex mutex_;
    std::condition_variable ready_;
    std::deque<std::function<void()>> jobs_;
    bool stopping_ = false;
    std::vector<std::thread> threads_;
};

}  // namespace tern::detail

#include "blocking_pool.hpp"

#include <algorithm>

namespace tern::detail {

namespace {
thread_local const blocking_pool* current_pool = nullptr;
}  // namespace

blocking_pool::blocking_pool(unsigned threads) {
    try {
        threads_.reserve(std::max(threads, 1u));
        for (unsigned i = 0; i < std::max(threads, 1u); ++i) {
            threads_.emplace_back([this] { run(); });
        }
    } catch (...) {
        join_all();  // the threads already started; then the error goes to start()
        throw;
    }
}

blocking_pool::~blocking_pool() { join_all(); }

void blocking_pool::join_all() noexcept {
    {
        std::lock_guard lock(mutex_);
        stopping_ = true;
    }
    ready_.notify_all();
    for (auto& t : threads_) t.join();
}

void blocking_pool::submit(std::function<void()> job) {
    {
        std::lock_guard lock(mutex_);
        jobs_.push_back(std::move(job));
    }
    ready_.notify_one();
}

bool blocking_pool::on_pool_thread() const noexcept { return current_pool == this; }

void blocking_pool::run() {
    current_pool = this;
    for (;;) {
        std::function<void()> job;
        {
            std::unique_lock lock(mutex_);
            ready_.wait(lock, [this] { return stopping_ || !jobs_.empty(); });
            if (jobs_.empty()) return;  // stopping, and nothing left to run
            job = std::move(jobs_.front());
            jobs_.pop_front();
        }
        job();
    }
}

}  // namespace tern::detail

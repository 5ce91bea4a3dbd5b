#pragma once
// A gate a test opens once, for a producer thread that must wait for the test's go (a
// stream's second piece, its end).

#include <chrono>
#include <condition_variable>
#include <mutex>

namespace tern_test {

class gate {
public:
    /// Lets every waiter through, now and later.
    void open() {
        {
            std::lock_guard lock(mutex_);
            open_ = true;
        }
        cv_.notify_all();
    }
    /// Waits until the gate opens, at most `at_most` (a test that fails must not hang).
    void wait(std::chrono::milliseconds at_most = std::chrono::seconds(5)) {
        std::unique_lock lock(mutex_);
        cv_.wait_for(lock, at_most, [this] { return open_; });
    }

private:
    std::mutex mutex_;
    std::condition_variable cv_;
    bool open_ = false;
};

}  // namespace tern_test

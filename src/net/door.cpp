#include "net/door.hpp"

#include "net/fd_waits.hpp"

#include "platform/sockets.hpp"

#include <utility>

namespace tern::detail {

bool worker_door::post(std::function<void()> fn) {
    std::function<void()> refused;  // destroyed after the lock is released
    {
        std::lock_guard lock(mutex_);
        if (!open_) {
            refused = std::move(fn);
            return false;
        }
        const bool was_empty = inbox_.empty();
        inbox_.push_back(std::move(fn));
        // The byte is written under the lock: the worker closes the pipe only after shut(),
        // which takes the lock. A full pipe (EAGAIN) already holds a byte that wakes the loop;
        // a non-empty inbox has one on its way.
        if (was_empty) platform::ring_wake(wake_fd_);
    }
    return true;
}

void worker_door::after(std::chrono::nanoseconds delay, std::function<void(bool fired)> fn) {
    if (timers_ == nullptr) {
        fn(false);  // the loop has ended
        return;
    }
    timers_->after(delay, std::move(fn));
}

std::shared_ptr<fd_wait> worker_door::wait_fd(int fd, bool write, std::chrono::nanoseconds timeout,
                                              std::function<void(fd_wait_end)> fn) {
    if (waits_ == nullptr) return nullptr;  // the loop has ended
    return waits_->wait(fd, write, timeout, std::move(fn));
}

std::vector<std::function<void()>> worker_door::take() {
    std::vector<std::function<void()>> work;
    std::lock_guard lock(mutex_);
    work.swap(inbox_);
    return work;
}

std::vector<std::function<void()>> worker_door::shut() {
    std::vector<std::function<void()>> left;
    std::lock_guard lock(mutex_);
    open_ = false;
    timers_ = nullptr;
    waits_ = nullptr;
    left.swap(inbox_);
    return left;
}

}  // namespace tern::detail

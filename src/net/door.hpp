#pragma once
// The door into one worker's event loop (http/exchange_port.hpp loop_door): an inbox under a
// mutex and a byte on the worker's wake pipe. It outlives the worker while anything holds
// it; once the loop has ended, posts are refused.

#include "http/exchange_port.hpp"
#include "platform/socket_api.hpp"

#include <chrono>
#include <functional>
#include <mutex>
#include <vector>

namespace tern::detail {

/// The timers a door's `after` arms: the worker's (its io_context), used on its thread.
class timer_service {
public:
    virtual void after(std::chrono::nanoseconds delay, std::function<void(bool fired)> fn) = 0;

protected:
    ~timer_service() = default;
};

class fd_waits;

class worker_door final : public loop_door {
public:
    /// `wake_fd`: the write end of the worker's wake pipe (not owned; the worker closes it
    /// only after `shut()`).
    explicit worker_door(platform::native_socket wake_fd) noexcept : wake_fd_(wake_fd) {}

    bool post(std::function<void()> fn) override;
    void after(std::chrono::nanoseconds delay, std::function<void(bool fired)> fn) override;
    /// Null (and `fn` destroyed uncalled) once the loop has ended.
    std::shared_ptr<fd_wait> wait_fd(int fd, bool write, std::chrono::nanoseconds timeout,
                                     std::function<void(fd_wait_end)> fn) override;
    /// Loop thread: the timers `after` uses and the waits `wait_fd` uses (the worker sets
    /// them; shut() forgets them).
    void set_timers(timer_service* timers, fd_waits* waits) noexcept {
        timers_ = timers;
        waits_ = waits;
    }
    /// Loop thread: the functions posted so far, in order.
    std::vector<std::function<void()>> take();
    /// Loop thread, when the loop has ended: refuses every later post and returns what was
    /// still queued (destroy it outside any lock: a function may hold handles that post).
    std::vector<std::function<void()>> shut();

private:
    std::mutex mutex_;
    std::vector<std::function<void()>> inbox_;
    platform::native_socket wake_fd_;
    bool open_ = true;
    timer_service* timers_ = nullptr;  // loop thread only
    fd_waits* waits_ = nullptr;        // loop thread only
};

}  // namespace tern::detail

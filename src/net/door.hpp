#pragma once
// The door into one worker's event loop (http/exchange_port.hpp loop_door): an inbox under a
// mutex and a byte on the worker's wake pipe. It outlives the worker while anything holds
// it; once the loop has ended, posts are refused.

#include "http/exchange_port.hpp"

#include <functional>
#include <mutex>
#include <vector>

namespace tern::detail {

class worker_door final : public loop_door {
public:
    /// `wake_fd`: the write end of the worker's wake pipe (not owned; the worker closes it
    /// only after `shut()`).
    explicit worker_door(int wake_fd) noexcept : wake_fd_(wake_fd) {}

    bool post(std::function<void()> fn) override;
    /// Loop thread: the functions posted so far, in order.
    std::vector<std::function<void()>> take();
    /// Loop thread, when the loop has ended: refuses every later post and returns what was
    /// still queued (destroy it outside any lock: a function may hold handles that post).
    std::vector<std::function<void()>> shut();

private:
    std::mutex mutex_;
    std::vector<std::function<void()>> inbox_;
    int wake_fd_;
    bool open_ = true;
};

}  // namespace tern::detail

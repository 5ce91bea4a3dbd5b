#pragma once
// A loop_door (src/http/exchange_port.hpp) for tests and fuzzers of the transport-free cores,
// which run the event loop's part themselves: what is posted, or put `after` a delay (which
// passes at once), runs when run() is called, in order; a wait for a descriptor is refused,
// as on a loop that has ended. Header-only: the HTTP/2 fuzzer includes it too.

#include "http/exchange_port.hpp"

#include <chrono>
#include <deque>
#include <functional>
#include <memory>
#include <utility>

namespace tern_test {

class fake_loop final : public tern::detail::loop_door {
public:
    bool post(std::function<void()> fn) override {
        queue.push_back(std::move(fn));
        return true;
    }
    void after(std::chrono::nanoseconds /*delay*/, std::function<void(bool)> fn) override {
        queue.push_back([fn = std::move(fn)] { fn(true); });
    }
    std::shared_ptr<tern::detail::fd_wait> wait_fd(
        int /*fd*/, bool /*write*/, std::chrono::nanoseconds /*timeout*/,
        std::function<void(tern::detail::fd_wait_end)> /*fn*/) override {
        return nullptr;
    }
    /// Runs what was queued before the call (what it queues waits for the next); false when
    /// nothing was.
    bool run() {
        if (queue.empty()) return false;
        auto work = std::exchange(queue, {});
        for (auto& fn : work) fn();
        return true;
    }

    std::deque<std::function<void()>> queue;
};

}  // namespace tern_test

#pragma once
// Polling for what another thread (a server's event loop, the blocking pool) does: tests
// wait for a condition instead of sleeping a fixed time, and never assert on how long it took.

#include <chrono>
#include <thread>

namespace tern_test {

/// Polls `ok` every 5 ms until it holds (true) or `limit` passes (false, after a last try).
template <class F>
bool eventually(F ok, std::chrono::milliseconds limit = std::chrono::seconds(10)) {
    const auto until = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < until) {
        if (ok()) return true;
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return ok();
}

}  // namespace tern_test

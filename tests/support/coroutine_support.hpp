#pragma once
// What the coroutine tests share: a server on one event loop (so "holds no thread" is
// visible: one loop serves everything while coroutines wait), and a count of coroutine
// frames that ended.

#include "support/test_server.hpp"

#include <atomic>

namespace tern_test {

/// test_config() with one worker thread.
inline tern::config one_thread() {
    tern::config cfg = test_config();
    cfg.threads = 1;
    return cfg;
}

/// Counts the frames that ended, however they ended (returned, threw, or were destroyed at
/// a stop), through a local whose destructor runs with the frame.
struct frame_counter {
    std::atomic<int>& ended;
    ~frame_counter() { ++ended; }
};

}  // namespace tern_test

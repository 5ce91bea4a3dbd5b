// The blocking pool's threads start as work needs them: none before the first job, one more
// for each job that finds no idle thread, never more than its size; every job runs.

#include <catch2/catch.hpp>

#include "handling/blocking_pool.hpp"

#if !defined(_WIN32)
#include <dirent.h>
#endif

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <set>
#include <thread>

namespace unit_test_handling_blocking_pool {

using namespace tern::detail;
using namespace std::chrono_literals;

// Not on Windows (docs/platforms.md): the test counts the process's threads in /proc.
#if !defined(_WIN32)
namespace {

// Threads of this process now (/proc/self/task).
std::size_t process_threads() {
    std::size_t n = 0;
    if (DIR* d = ::opendir("/proc/self/task")) {
        while (const dirent* e = ::readdir(d)) {
            if (e->d_name[0] != '.') ++n;
        }
        ::closedir(d);
    }
    return n;
}

}  // namespace

TEST_CASE(
    "the blocking pool starts no thread before its first job, then as many as jobs run at once, up "
    "to its size",
    "[blocking_pool]") {
    const std::size_t before = process_threads();
    std::mutex m;
    std::condition_variable cv;
    int running = 0;
    bool release = false;
    std::set<std::thread::id> seen;
    std::atomic<int> done{0};
    {
        blocking_pool pool(3, 100);
        CHECK(process_threads() == before);  // nothing started yet

        const auto job = [&] {
            std::unique_lock lock(m);
            ++running;
            seen.insert(std::this_thread::get_id());
            cv.notify_all();
            cv.wait_for(lock, 10s, [&] { return release; });
            --running;
            ++done;
        };
        for (int i = 0; i < 5; ++i) REQUIRE(pool.submit(pool.new_ticket(), job));
        {
            std::unique_lock lock(m);
            // Three run at once (the pool's size), the other two wait for them.
            CHECK(cv.wait_for(lock, 10s, [&] { return running == 3; }));
            CHECK(seen.size() == 3);
        }
        CHECK(process_threads() == before + 3);
        CHECK(pool.waiting() == 2);
        {
            std::lock_guard lock(m);
            release = true;
        }
        cv.notify_all();
    }  // the destructor runs what is queued, then joins
    CHECK(done == 5);
    CHECK(seen.size() == 3);
    CHECK(process_threads() == before);
}

#endif

}  // namespace unit_test_handling_blocking_pool

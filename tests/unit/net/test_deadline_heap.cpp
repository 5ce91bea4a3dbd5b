// The loop's deadline heap (src/net/deadline_heap.hpp) without a loop: entries scheduled,
// moved earlier and later, unscheduled from any place, and popped in time order, checked
// against a sorted reference through many random operations.

#include "net/deadline_heap.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <memory>
#include <random>
#include <vector>

namespace unit_test_net_deadline_heap {

using namespace tern::detail;
using namespace std::chrono_literals;
using clock = deadline_heap::clock;

namespace {

struct entry final : deadline_entry {
    explicit entry(int n = 0) : id(n) {}
    int id;
};

const clock::time_point t0 = clock::time_point{} + 1000s;

// Pops everything due at `now`, in order, as ids.
std::vector<int> pop_all(deadline_heap& heap, clock::time_point now) {
    std::vector<int> ids;
    while (auto* e = heap.pop_due(now)) {
        CHECK_FALSE(e->scheduled());
        ids.push_back(static_cast<entry*>(e)->id);
    }
    return ids;
}

}  // namespace

TEST_CASE("deadlines pop in time order and only once due", "[deadlines]") {
    deadline_heap heap;
    entry a(1), b(2), c(3);
    CHECK(heap.earliest() == clock::time_point::max());
    heap.schedule(a, t0 + 30ms);
    heap.schedule(b, t0 + 10ms);
    heap.schedule(c, t0 + 20ms);
    CHECK(heap.earliest() == t0 + 10ms);
    CHECK(heap.pop_due(t0 + 9ms) == nullptr);
    CHECK(pop_all(heap, t0 + 20ms) == std::vector<int>{2, 3});
    CHECK(a.scheduled());
    CHECK(a.scheduled_at() == t0 + 30ms);
    CHECK(pop_all(heap, t0 + 1s) == std::vector<int>{1});
    CHECK(heap.empty());
}

TEST_CASE("a scheduled deadline moves earlier or later in place", "[deadlines]") {
    deadline_heap heap;
    entry a(1), b(2), c(3);
    heap.schedule(a, t0 + 10ms);
    heap.schedule(b, t0 + 20ms);
    heap.schedule(c, t0 + 30ms);
    heap.schedule(a, t0 + 40ms);  // later: no longer the first
    CHECK(heap.size() == 3);
    CHECK(heap.earliest() == t0 + 20ms);
    heap.schedule(c, t0 + 5ms);  // earlier: now the first
    CHECK(heap.earliest() == t0 + 5ms);
    CHECK(pop_all(heap, t0 + 1s) == std::vector<int>{3, 2, 1});
}

TEST_CASE("an unscheduled deadline never pops, wherever it was", "[deadlines]") {
    deadline_heap heap;
    entry a(1), b(2), c(3);
    heap.unschedule(a);  // not scheduled: nothing
    heap.schedule(a, t0 + 10ms);
    heap.schedule(b, t0 + 20ms);
    heap.schedule(c, t0 + 30ms);
    heap.unschedule(a);  // the first
    CHECK_FALSE(a.scheduled());
    CHECK(heap.earliest() == t0 + 20ms);
    heap.unschedule(c);  // the last
    CHECK(pop_all(heap, t0 + 1s) == std::vector<int>{2});
    heap.schedule(a, t0 + 1ms);  // and it can come back
    CHECK(pop_all(heap, t0 + 1s) == std::vector<int>{1});
}

TEST_CASE("random schedules, moves and removals pop as a sorted reference says", "[deadlines]") {
    std::mt19937 random(20261204);
    constexpr int n = 200;
    std::vector<std::unique_ptr<entry>> entries;
    for (int i = 0; i < n; ++i) {
        entries.push_back(std::make_unique<entry>(i));
    }
    deadline_heap heap;
    std::vector<clock::time_point> when(n, clock::time_point::max());  // max: not scheduled
    std::uniform_int_distribution<int> pick(0, n - 1);
    std::uniform_int_distribution<int> ms(0, 999);
    std::uniform_int_distribution<int> action(0, 9);
    clock::time_point now = t0;
    for (int step = 0; step < 20000; ++step) {
        const int i = pick(random);
        const int what = action(random);
        if (what < 6) {
            when[static_cast<std::size_t>(i)] = now + std::chrono::milliseconds(ms(random));
            heap.schedule(*entries[static_cast<std::size_t>(i)], when[static_cast<std::size_t>(i)]);
        } else if (what < 8) {
            heap.unschedule(*entries[static_cast<std::size_t>(i)]);
            when[static_cast<std::size_t>(i)] = clock::time_point::max();
        } else {
            now += std::chrono::milliseconds(ms(random) / 10);
            // Every entry due pops, earliest first; none that is not.
            clock::time_point last{};
            while (auto* e = heap.pop_due(now)) {
                const auto id = static_cast<std::size_t>(static_cast<entry*>(e)->id);
                REQUIRE(when[id] <= now);
                REQUIRE(when[id] >= last);
                last = when[id];
                when[id] = clock::time_point::max();
            }
            for (const auto& w : when) REQUIRE(w > now);
        }
        const auto earliest = *std::min_element(when.begin(), when.end());
        REQUIRE(heap.earliest() == earliest);
        const auto count = static_cast<std::size_t>(std::count_if(
            when.begin(), when.end(), [](auto w) { return w != clock::time_point::max(); }));
        REQUIRE(heap.size() == count);
    }
}

}  // namespace unit_test_net_deadline_heap

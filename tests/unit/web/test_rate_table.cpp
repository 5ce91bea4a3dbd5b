// The token buckets of rate limiting (src/web/rate_table.hpp) with a clock the test moves:
// a burst, then one request per refill interval; a key's wait and reset; keys apart; and a
// table whose size stays fixed whatever the number of keys, forgetting only to let a key
// through sooner.

#include "web/rate_table.hpp"

#include <catch2/catch.hpp>

#include <chrono>
#include <string>

namespace unit_test_web_rate_table {

using namespace std::chrono_literals;
using tern::detail::rate_table;

TEST_CASE("a bucket lets a burst through, then one request per refill interval", "[rate_limit]") {
    // 10 per second: one every 100 ms; bursts of 3.
    rate_table table(64, 10, 1s, 3);
    const auto t0 = rate_table::clock::now();
    for (int i = 0; i < 3; ++i) {
        const auto d = table.take("1.2.3.4", t0);
        CHECK(d.allowed);
        CHECK(d.remaining == static_cast<std::uint64_t>(2 - i));
    }
    const auto refused = table.take("1.2.3.4", t0);
    CHECK_FALSE(refused.allowed);
    CHECK(refused.retry_after == 100ms);
    CHECK(refused.reset == 300ms);  // three tokens short of full
    CHECK_FALSE(table.take("1.2.3.4", t0 + 99ms).allowed);
    CHECK(table.take("1.2.3.4", t0 + 100ms).allowed);
    CHECK_FALSE(table.take("1.2.3.4", t0 + 150ms).allowed);
    // A long quiet spell fills the bucket to its burst, not beyond.
    for (int i = 0; i < 3; ++i) CHECK(table.take("1.2.3.4", t0 + 10s).allowed);
    CHECK_FALSE(table.take("1.2.3.4", t0 + 10s).allowed);
}

TEST_CASE("keys have buckets of their own, long keys included", "[rate_limit]") {
    rate_table table(64, 1, 1min, 1);
    const auto t0 = rate_table::clock::now();
    const std::string long_a(200, 'a');
    std::string long_b = long_a;
    long_b.back() = 'b';  // differs only past the bytes kept whole
    CHECK(table.take("a", t0).allowed);
    CHECK(table.take("b", t0).allowed);
    CHECK(table.take(long_a, t0).allowed);
    CHECK(table.take(long_b, t0).allowed);
    CHECK_FALSE(table.take("a", t0).allowed);
    CHECK_FALSE(table.take(long_a, t0).allowed);
    CHECK_FALSE(table.take(long_b, t0).allowed);
    CHECK(table.used() == 4);
}

TEST_CASE("a million keys leave the table at its size, and forgetting only lets a key through",
          "[rate_limit]") {
    rate_table table(1024, 1, 1h, 1);
    const auto t0 = rate_table::clock::now();
    REQUIRE(table.take("victim", t0).allowed);
    REQUIRE_FALSE(table.take("victim", t0).allowed);
    for (int i = 0; i < 1'000'000; ++i) {
        (void)table.take("k" + std::to_string(i), t0 + std::chrono::microseconds(i + 1));
    }
    CHECK(table.capacity() == 1024);
    CHECK(table.used() == 1024);
    // The victim was forgotten by now (its set's least recently used): it starts full, never
    // emptier than it was.
    CHECK(table.take("victim", t0 + 2s).allowed);
}

}  // namespace unit_test_web_rate_table

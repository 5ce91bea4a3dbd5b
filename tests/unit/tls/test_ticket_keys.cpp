// Session-ticket keys that rotate by the clock (src/tls/ticket_keys.hpp), without sockets:
// the same secret and period give the same keys on every thread, another period or secret
// other keys, and a ticket is accepted under the current or the previous period's key only.

#include "tls/ticket_keys.hpp"

#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

namespace unit_test_tls_ticket_keys {

using namespace tern::detail;

namespace {

const unsigned char (&name_of(const ticket_key& k))[16] {
    return *reinterpret_cast<const unsigned char(*)[16]>(k.name.data());
}

}  // namespace

TEST_CASE("ticket keys are a function of the secret and the period", "[unit][tls]") {
    const ticket_secret secret = new_ticket_secret();
    const ticket_key a = ticket_key_for(secret, 1000);
    const ticket_key again = ticket_key_for(secret, 1000);
    CHECK(a.name == again.name);
    CHECK(a.aes == again.aes);
    CHECK(a.hmac == again.hmac);
    const ticket_key next = ticket_key_for(secret, 1001);
    CHECK(next.name != a.name);
    CHECK(next.aes != a.aes);
    CHECK(next.hmac != a.hmac);
    CHECK(a.aes != a.hmac);
    const ticket_key other = ticket_key_for(new_ticket_secret(), 1000);
    CHECK(other.name != a.name);
    CHECK(other.aes != a.aes);
}

TEST_CASE("a ticket is accepted under the current or the previous period's key only",
          "[unit][tls]") {
    const ticket_secret secret = new_ticket_secret();
    const std::int64_t now = ticket_period_of(std::chrono::system_clock::now());
    ticket_key found;
    ticket_keys keys(secret);
    const ticket_key current = ticket_key_for(secret, now);
    CHECK(keys.find(now, name_of(current), found) == 1);
    CHECK(found.aes == current.aes);
    const ticket_key previous = ticket_key_for(secret, now - 1);
    CHECK(keys.find(now, name_of(previous), found) == 2);  // accepted, renewed
    CHECK(found.hmac == previous.hmac);
    CHECK(keys.find(now, name_of(ticket_key_for(secret, now - 2)), found) == 0);
    CHECK(keys.find(now, name_of(ticket_key_for(secret, now + 1)), found) == 0);
    ticket_keys others(new_ticket_secret());
    CHECK(others.find(now, name_of(current), found) == 0);
}

TEST_CASE("kept ticket keys are the derived ones, across periods and threads", "[unit][tls]") {
    const ticket_secret secret = new_ticket_secret();
    ticket_keys keys(secret);
    // Periods asked for in the order the clock gives them, with a look back at the previous
    // one each time (as a resumption does), then an old one no longer kept.
    for (std::int64_t period = 100; period < 110; ++period) {
        for (const std::int64_t asked : {period, period - 1, period}) {
            const ticket_key kept = keys.key_for(asked);
            const ticket_key derived = ticket_key_for(secret, asked);
            CHECK(kept.name == derived.name);
            CHECK(kept.aes == derived.aes);
            CHECK(kept.hmac == derived.hmac);
        }
    }
    CHECK(keys.key_for(3).aes == ticket_key_for(secret, 3).aes);
    // Many handshakes at once: every thread sees the same keys.
    std::vector<std::thread> threads;
    std::atomic<int> wrong{0};
    for (int t = 0; t < 4; ++t) {
        threads.emplace_back([&keys, &secret, &wrong, t] {
            for (std::int64_t i = 0; i < 200; ++i) {
                const std::int64_t period = 500 + (i + t) % 3;
                if (keys.key_for(period).hmac != ticket_key_for(secret, period).hmac) ++wrong;
            }
        });
    }
    for (auto& th : threads) th.join();
    CHECK(wrong == 0);
}

TEST_CASE("the ticket period follows the clock in whole hours", "[unit][tls]") {
    using std::chrono::system_clock;
    const auto t = system_clock::time_point(std::chrono::seconds(3600 * 500 + 10));
    CHECK(ticket_period_of(t) == 500);
    CHECK(ticket_period_of(t + std::chrono::seconds(3589)) == 500);
    CHECK(ticket_period_of(t + std::chrono::seconds(3590)) == 501);
}

}  // namespace unit_test_tls_ticket_keys

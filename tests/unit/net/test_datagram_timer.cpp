// The timer of src/net's datagram_socket (QUIC's nearest expiry, docs/http3.md): on_expiry
// never comes before the last time asked for, a time already come is run at once and once
// however often it is asked, an earlier time replaces a later one, and a closed socket tells
// nothing more. A real UDP socket on 127.0.0.1 and a real event loop, run on the test's
// thread. (The timer leaves its wait alone when the time moves later, which saves the
// kernel's timer work: that is measured in bench/, not here.)

#include "net/datagram_socket.hpp"

#include <catch2/catch.hpp>

#include <asio/io_context.hpp>

#include <chrono>
#include <vector>

namespace unit_test_datagram_timer {

using clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

namespace {

struct recorder final : tern::detail::datagram_receiver {
    void on_datagram(std::span<const std::uint8_t>, const sockaddr*, socklen_t, const sockaddr*,
                     socklen_t) override {}
    void on_expiry() override { told.push_back(clock::now()); }
    std::vector<clock::time_point> told;
};

struct loop {
    asio::io_context io;
    recorder receiver;
    tern::detail::datagram_socket socket{io, "127.0.0.1", 0, receiver};

    // Runs the loop until on_expiry has been told `count` times, or `limit` has passed.
    void run_until(std::size_t count, milliseconds limit) {
        const auto end = clock::now() + limit;
        while (receiver.told.size() < count && clock::now() < end) {
            io.run_for(milliseconds(5));
            io.restart();
        }
    }
};

}  // namespace

TEST_CASE("datagram timer: a time already come is run once from the loop, however often asked",
          "[datagram-timer]") {
    loop l;
    const auto now = clock::now();
    for (int i = 0; i < 5; ++i) l.socket.expire_at(now);
    l.run_until(2, milliseconds(200));
    CHECK(l.receiver.told.size() == 1);
}

TEST_CASE("datagram timer: a later time given after an earlier one is not run before it",
          "[datagram-timer]") {
    loop l;
    const auto start = clock::now();
    l.socket.expire_at(start + milliseconds(20));
    l.socket.expire_at(start + milliseconds(150));
    l.run_until(2, milliseconds(600));
    REQUIRE(l.receiver.told.size() == 1);
    CHECK(l.receiver.told[0] >= start + milliseconds(150));
}

TEST_CASE("datagram timer: an earlier time replaces a later one", "[datagram-timer]") {
    loop l;
    const auto start = clock::now();
    l.socket.expire_at(start + milliseconds(3000));
    l.socket.expire_at(start + milliseconds(30));
    l.run_until(1, milliseconds(2000));
    REQUIRE(l.receiver.told.size() == 1);
    CHECK(l.receiver.told[0] >= start + milliseconds(30));
    CHECK(l.receiver.told[0] < start + milliseconds(2000));
}

TEST_CASE("datagram timer: a time set again from on_expiry is run again", "[datagram-timer]") {
    loop l;
    struct again final : tern::detail::datagram_receiver {
        tern::detail::datagram_socket* socket = nullptr;
        int told = 0;
        void on_datagram(std::span<const std::uint8_t>, const sockaddr*, socklen_t, const sockaddr*,
                         socklen_t) override {}
        void on_expiry() override {
            if (++told < 3) socket->expire_at(clock::now() + milliseconds(10));
        }
    } receiver;
    receiver.socket = &l.socket;
    l.socket.set_receiver(receiver);
    l.socket.expire_at(clock::now());
    const auto end = clock::now() + milliseconds(1000);
    while (receiver.told < 3 && clock::now() < end) {
        l.io.run_for(milliseconds(5));
        l.io.restart();
    }
    CHECK(receiver.told == 3);
}

TEST_CASE("datagram timer: a closed socket tells nothing more", "[datagram-timer]") {
    loop l;
    l.socket.expire_at(clock::now());
    l.socket.expire_at(clock::now() + milliseconds(20));
    l.socket.close();
    l.run_until(1, milliseconds(100));
    CHECK(l.receiver.told.empty());
}

}  // namespace unit_test_datagram_timer

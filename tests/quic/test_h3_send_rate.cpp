// HTTP/3's minimum send rate over a real UDP socket on 127.0.0.1 (docs/http3.md, "Deadlines
// and the stop"): an answer that waits on the client's flow control or acknowledgements must
// move http3.min_send_progress bytes per timeouts.write, as over HTTP/2, or its stream is
// reset. tests/support/quic_client (ngtcp2's client) plays a client that reads slowly, by
// granting a small stream window once a second. Built only with TERN_HTTP3.

#include <catch2/catch.hpp>

#include "support/quic_app.hpp"
#include "support/quic_client.hpp"

#include <tern/config.hpp>

#include <chrono>
#include <cstdint>
#include <string>

namespace wire_test_h3_send_rate {

using namespace std::chrono_literals;
using tern_test::h3_body;
using tern_test::h3_get;
using tern_test::h3_status;
using tern_test::quic_app;
using tern_test::quic_client;
using tern_test::start_h3;

constexpr std::size_t big = 4 * 1024 * 1024;
constexpr std::uint64_t request_cancelled = 0x10c;  // H3_REQUEST_CANCELLED

tern::config two_second_writes() {
    tern::config settings;
    settings.timeouts.write = 2s;  // http3.min_send_progress: 16 KiB per 2 s
    return settings;
}

void big_route(tern::app& app) {
    app.get("/big", [](tern::context& ctx) { ctx.text(std::string(big, 'x')); });
}

TEST_CASE(
    "h3 send rate: a client reading a 4 MiB answer at 2 KB/s is reset within 2 x "
    "timeouts.write",
    "[http3]") {
    quic_app server(two_second_writes(), big_route);
    quic_client slow(server.port, 2048);  // a 2 KiB stream window, granted again once a second
    start_h3(slow);
    const auto id = slow.open_bidi();
    REQUIRE(id >= 0);
    slow.send(id, h3_get("/big"), true);

    // Every second the client reads what came (2 KiB: its window) and grants that much again.
    // Acknowledgements keep coming, so "any progress" would never end it (it did not: the
    // stream was still open after 30 s with timeouts.write at 5 s).
    const auto began = std::chrono::steady_clock::now();
    const auto until = began + 2 * 2s + 2s;  // a second of check interval, a second of slack
    slow.hold_window(true);
    while (!slow.closed() && !slow.stream(id).reset && std::chrono::steady_clock::now() < until) {
        slow.pump_until([&] { return slow.stream(id).reset; }, 1s);
        slow.hold_window(false);  // grants the 2 KiB read, at once
        slow.hold_window(true);
    }
    const auto s = slow.stream(id);
    INFO("after " << std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count()
                  << " s, " << s.bytes.size() << " bytes; " << slow.close_reason());
    REQUIRE(s.reset);
    CHECK(s.reset_code == request_cancelled);
    CHECK(h3_status(s.bytes) == 200);
    CHECK(s.bytes.size() < big / 8);
    CHECK_FALSE(slow.closed());  // the stream, not the connection
}

TEST_CASE("h3 send rate: a normal download of the same answer is not cut off", "[http3]") {
    quic_app server(two_second_writes(), big_route);
    quic_client c(server.port);
    start_h3(c);
    const auto id = c.open_bidi();
    REQUIRE(id >= 0);
    c.send(id, h3_get("/big"), true);
    c.pump_until([&] { return c.stream(id).ended || c.stream(id).reset; }, 60s);
    const auto s = c.stream(id);
    INFO(c.close_reason());
    CHECK_FALSE(s.reset);
    REQUIRE(s.ended);
    CHECK(h3_status(s.bytes) == 200);
    CHECK(h3_body(s.bytes).size() == big);
}

}  // namespace wire_test_h3_send_rate

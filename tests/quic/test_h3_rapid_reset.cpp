// HTTP/3's rapid reset over a real UDP socket on 127.0.0.1 (docs/http3.md, "Hardening, row by
// row"): requests the client cancels (RESET_STREAM, STOP_SENDING) count against a budget per
// connection, as HTTP/2's RST_STREAM frames do, and a cancelled request's place in the stream
// limit comes back only once the work its handler began has ended. tests/support/quic_client
// (ngtcp2's client, HTTP/3 bytes by hand) plays the client. Built only with TERN_HTTP3.

#include <catch2/catch.hpp>

#include "support/quic_app.hpp"
#include "support/quic_client.hpp"

#include <tern/config.hpp>
#include <tern/deferred.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace wire_test_h3_rapid_reset {

using namespace std::chrono_literals;
using tern_test::h3_body;
using tern_test::h3_fetch;
using tern_test::h3_get;
using tern_test::h3_status;
using tern_test::quic_app;
using tern_test::quic_client;
using tern_test::start_h3;

constexpr std::uint64_t request_cancelled = 0x10c;  // H3_REQUEST_CANCELLED
constexpr std::uint64_t excessive_load = 0x107;     // H3_EXCESSIVE_LOAD, 263

TEST_CASE(
    "h3 rapid reset: 5,000 requests opened and cancelled at once close the connection with "
    "H3_EXCESSIVE_LOAD, after few handlers, and others are served",
    "[http3]") {
    tern::config settings;
    settings.timeouts.drain = 60s;  // see the end
    quic_app server(settings);
    quic_client flood(server.port);
    start_h3(flood);

    // Each stream a complete request (HEADERS with its end: the handler runs) and then
    // RESET_STREAM and STOP_SENDING, a new stream as soon as the server's limit allows one.
    constexpr std::uint64_t streams = 5'000;
    const auto began = std::chrono::steady_clock::now();
    const auto give_up = began + 60s;
    std::uint64_t sent = 0;
    while (sent < streams && !flood.closed() && std::chrono::steady_clock::now() < give_up) {
        const auto id = flood.open_bidi();
        if (id < 0) {
            flood.pump(100ms);
            continue;
        }
        flood.send(id, h3_get("/"), true);
        flood.reset(id, request_cancelled);
        flood.pump(0ms);
        ++sent;
    }
    flood.pump_until([&] { return flood.closed(); }, 5s);
    const auto took = std::chrono::duration<double>(std::chrono::steady_clock::now() - began);
    INFO("sent " << sent << " in " << took.count() << " s; " << flood.close_reason());
    REQUIRE(flood.closed());
    CHECK(sent < streams);
    CHECK(flood.close_reason().find("code " + std::to_string(excessive_load) + ", application") !=
          std::string::npos);
    // The budget (config http3.max_concurrent_streams = 100): 200 at once and 100 a second;
    // besides those, at most the 100 streams the limit lets in at a time were run.
    INFO("handled: " << server.handled.load());
    CHECK(static_cast<double>(server.handled.load()) <= 200 + 100 * took.count() + 100);

    // Another client is served.
    quic_client other(server.port);
    start_h3(other);
    const auto answer = h3_fetch(other, "/");
    CHECK(h3_status(answer.bytes) == 200);
    CHECK(h3_body(answer.bytes) == "hi");

    // Nothing of the flood is left on the server: a stop closes the other connection as soon
    // as it has no request stream open (it would wait timeouts.drain, 60 s, for one left).
    std::thread stopper([&] { server.app.stop(); });
    const bool closed = other.pump_until([&] { return other.closed(); }, 20s);
    stopper.join();
    INFO(other.close_reason());
    CHECK(closed);
}

TEST_CASE(
    "h3 rapid reset: a cancelled request whose handler still works keeps its place in the "
    "stream limit until the work ends",
    "[http3]") {
    std::mutex mutex;
    std::vector<tern::deferred> replies;  // the handlers' work, not yet done
    std::atomic<int> started{0};
    tern::config settings;
    settings.http3.max_concurrent_streams = 4;
    quic_app server(settings, [&](tern::app& app) {
        app.get("/slow", [&](tern::context& ctx) {
            const std::lock_guard lock(mutex);
            replies.push_back(ctx.defer());
            ++started;
        });
    });
    quic_client c(server.port);
    start_h3(c);

    std::vector<std::int64_t> ids;
    for (int i = 0; i < 4; ++i) {
        const auto id = c.open_bidi();
        REQUIRE(id >= 0);
        c.send(id, h3_get("/slow"), true);
        ids.push_back(id);
    }
    REQUIRE(c.pump_until([&] { return started.load() == 4; }, 10s));
    CHECK(c.max_bidi_streams() == 4);

    // The client cancels all four while their handlers are still at work: the streams close,
    // and the places stay taken (before, each came back at the close: 8 at once).
    for (const auto id : ids) c.reset(id, request_cancelled);
    CHECK(c.pump_until([&] { return c.stream(ids.back()).closed; }, 10s));
    CHECK_FALSE(c.pump_until([&] { return c.max_bidi_streams() > 4; }, 1500ms));
    CHECK(c.open_bidi() == -1);

    // The work ends (the handles are let go, as an application does whose client left): the
    // four places come back, and the connection, within its budget, is served.
    {
        const std::lock_guard lock(mutex);
        for (const auto& r : replies) CHECK_FALSE(r.complete());  // the client has left
        replies.clear();
    }
    CHECK(c.pump_until([&] { return c.max_bidi_streams() == 8; }, 10s));
    INFO(c.close_reason());
    CHECK_FALSE(c.closed());
    const auto answer = h3_fetch(c, "/");
    CHECK(h3_status(answer.bytes) == 200);
    CHECK(h3_body(answer.bytes) == "hi");
}

}  // namespace wire_test_h3_rapid_reset

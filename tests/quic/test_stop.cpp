// A stop while HTTP/3 request streams are still open (docs/http3.md): the answers under way
// get until timeouts.drain, then the connections are closed and stop() returns. Over a real
// UDP socket with tests/support/quic_client. Built only with TERN_HTTP3.

#include <catch2/catch.hpp>

#include "support/eventually.hpp"
#include "support/quic_app.hpp"
#include "support/quic_client.hpp"

#include <tern/config.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <thread>

namespace wire_test_quic_stop {

using namespace std::chrono_literals;
using tern_test::h3_get;
using tern_test::quic_app;
using tern_test::quic_client;
using tern_test::start_h3;

TEST_CASE("quic stop: with a request stream open past timeouts.drain, stop returns", "[http3]") {
    // The drain deadline used to close the HTTP/3 connections without ending the worker's
    // loop (nothing checked again whether it had drained), so stop() never returned.
    tern::config settings;
    settings.timeouts.drain = 500ms;
    quic_app server(settings);
    quic_client c(server.port);
    start_h3(c);
    const auto id = c.open_bidi();
    REQUIRE(id >= 0);
    c.send(id, h3_get("/"), false);  // a request never ended: its stream stays open
    (void)c.pump_until([] { return false; }, 300ms);  // the server reads it meanwhile
    REQUIRE_FALSE(c.closed());

    std::atomic<bool> stopped{false};
    std::thread stopper([&] {
        server.app.stop();
        stopped = true;
    });
    // The client reads on (it acknowledges what comes) until the server closes it.
    const bool closed = c.pump_until([&] { return c.closed(); }, 20s);
    const bool returned = tern_test::eventually([&] { return stopped.load(); }, 20s);
    if (!returned) {
        // A stop that never returns: a failure, not a hang (its thread cannot be joined).
        std::fputs("quic stop: stop() did not return\n", stderr);
        std::quick_exit(1);
    }
    stopper.join();
    INFO(c.close_reason());
    CHECK(closed);
    CHECK(returned);
}

}  // namespace wire_test_quic_stop

// Requests over HTTP/3 as a client sends them on a real UDP socket on 127.0.0.1
// (docs/http3.md): what the request side answers before the handler runs. Built only with
// TERN_HTTP3.

#include <catch2/catch.hpp>

#include "support/quic_app.hpp"
#include "support/quic_client.hpp"

#include <chrono>
#include <string>
#include <vector>

namespace wire_test_h3_requests {

using namespace std::chrono_literals;
using tern_test::h3_body;
using tern_test::h3_data;
using tern_test::h3_post;
using tern_test::h3_statuses;
using tern_test::quic_app;
using tern_test::quic_client;
using tern_test::start_h3;

TEST_CASE(
    "h3 requests: Expect 100-continue gets an interim 100 before the body is sent, then the "
    "answer",
    "[http3]") {
    quic_app server({}, tern_test::size_route);
    quic_client c(server.port);
    start_h3(c);

    const auto id = c.open_bidi();
    REQUIRE(id >= 0);
    c.send(id, h3_post("/size", 5, true), false);
    // Only the head is sent: the 100 comes without the body.
    CHECK(c.pump_until([&] { return !h3_statuses(c.stream(id).bytes).empty(); }, 10s));
    CHECK(h3_statuses(c.stream(id).bytes) == std::vector<int>{100});

    c.send(id, h3_data("hello"), true);
    CHECK(c.pump_until([&] { return c.stream(id).ended; }, 10s));
    INFO(c.close_reason());
    CHECK(h3_statuses(c.stream(id).bytes) == std::vector<int>{100, 200});
    CHECK(h3_body(c.stream(id).bytes) == "5");
}

TEST_CASE("h3 requests: no interim 100 for a request that does not ask for one", "[http3]") {
    quic_app server({}, tern_test::size_route);
    quic_client c(server.port);
    start_h3(c);
    const auto id = c.open_bidi();
    REQUIRE(id >= 0);
    auto bytes = h3_post("/size", 5);
    const auto body = h3_data("hello");
    bytes.insert(bytes.end(), body.begin(), body.end());
    c.send(id, bytes, true);
    CHECK(c.pump_until([&] { return c.stream(id).ended; }, 10s));
    CHECK(h3_statuses(c.stream(id).bytes) == std::vector<int>{200});
    CHECK(h3_body(c.stream(id).bytes) == "5");
}

}  // namespace wire_test_h3_requests

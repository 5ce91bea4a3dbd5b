// Requests over HTTP/3 as a client sends them on a real UDP socket on 127.0.0.1
// (docs/http3.md): what the request side answers before the handler runs. Built only with
// TERN_HTTP3.

#include <catch2/catch.hpp>

#include "support/quic_app.hpp"
#include "support/quic_client.hpp"

#include <chrono>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace wire_test_h3_requests {

using namespace std::chrono_literals;
using tern_test::h3_body;
using tern_test::h3_data;
using tern_test::h3_fetch;
using tern_test::h3_get;
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

// The length of the HEADERS frame that begins `bytes` (RFC 9114 7.1: type and length as
// QUIC variable-length integers), 0 when `bytes` does not begin with one.
std::uint64_t headers_length(std::span<const std::uint8_t> bytes) {
    std::size_t at = 0;
    const auto varint = [&]() -> std::uint64_t {
        if (at >= bytes.size()) return 0;
        const std::size_t n = std::size_t{1} << (bytes[at] >> 6);
        if (at + n > bytes.size()) return 0;
        std::uint64_t v = bytes[at] & 0x3fU;
        for (std::size_t i = 1; i < n; ++i) v = (v << 8) | bytes[at + i];
        at += n;
        return v;
    };
    if (varint() != 0x01) return 0;
    return varint();
}

TEST_CASE(
    "h3 requests: each stream's request and response start empty though the connection reuses "
    "the buffers of the streams before it",
    "[http3]") {
    // A POST's fields (content-length) and an answer with a body of its own and a field:
    // the route after them on the same connection sees none of that request's fields and
    // sends none of that answer's body.
    quic_app server({}, [](tern::app& app) {
        tern_test::size_route(app);
        app.get("/page",
                [](tern::context& ctx) { ctx.header("X-Page", "1").text(std::string(1400, 'p')); });
        app.get("/seen", [](tern::context& ctx) {
            std::string names;
            for (const auto& f : ctx.headers()) names += std::string(f.name) + ",";
            ctx.text(names);
        });
    });
    quic_client c(server.port);
    start_h3(c);
    // The answer of /seen on a stream made before any other's buffers could be reused: the
    // same answer later must have the same fields (the client's SETTINGS allow QPACK no
    // dynamic table, so equal fields make equal lengths).
    const auto first = h3_fetch(c, "/seen");
    REQUIRE(h3_body(first.bytes) == "Host,");
    const auto fields_length = headers_length(first.bytes);
    REQUIRE(fields_length != 0);
    const auto burst = [&](auto&& open_one) {
        // Ten at once, so that streams end together and the next ones take several spares.
        std::vector<std::int64_t> ids;
        for (int i = 0; i < 10; ++i) {
            std::int64_t id = -1;
            REQUIRE(c.pump_until([&] { return (id = c.open_bidi()) >= 0; }, 10s));
            open_one(id);
            ids.push_back(id);
        }
        REQUIRE(c.pump_until(
            [&] {
                for (const auto id : ids) {
                    if (!c.stream(id).ended) return false;
                }
                return true;
            },
            10s));
        return ids;
    };
    for (int round = 0; round < 3; ++round) {
        for (const auto id : burst([&](std::int64_t id) {
                 auto bytes = h3_post("/size", 5);
                 const auto body = h3_data("hello");
                 bytes.insert(bytes.end(), body.begin(), body.end());
                 c.send(id, bytes, true);
             })) {
            CHECK(h3_statuses(c.stream(id).bytes) == std::vector<int>{200});
            CHECK(h3_body(c.stream(id).bytes) == "5");
        }
        for (const auto id : burst([&](std::int64_t id) { c.send(id, h3_get("/page"), true); })) {
            CHECK(h3_body(c.stream(id).bytes) == std::string(1400, 'p'));
        }
        for (const auto id : burst([&](std::int64_t id) { c.send(id, h3_get("/seen"), true); })) {
            INFO(h3_body(c.stream(id).bytes));
            CHECK(h3_statuses(c.stream(id).bytes) == std::vector<int>{200});
            // The fields of h3_get only, as HTTP/1.1 names them (":authority" as Host).
            CHECK(h3_body(c.stream(id).bytes) == "Host,");
            CHECK(headers_length(c.stream(id).bytes) == fields_length);  // no x-page
        }
    }
    CHECK_FALSE(c.closed());
}

}  // namespace wire_test_h3_requests

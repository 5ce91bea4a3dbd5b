// Trailers over HTTP/3 (RFC 9114 4.1, docs/trailers.md) on a real UDP socket on 127.0.0.1:
// a request's trailing HEADERS reach the handler; a response's trailers (ctx.trailer,
// response_stream::trailer) follow its body in a HEADERS frame that ends the stream. Built only
// with TERN_HTTP3.

#include <catch2/catch.hpp>

#include "support/quic_app.hpp"
#include "support/quic_client.hpp"

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace wire_test_h3_trailers {

using namespace std::chrono_literals;
using tern_test::h3_body;
using tern_test::h3_data;
using tern_test::h3_fetch;
using tern_test::h3_post;
using tern_test::h3_statuses;
using tern_test::quic_app;
using tern_test::quic_client;
using tern_test::start_h3;

namespace {

void routes(tern::app& app) {
    app.get("/whole", [](tern::context& ctx) { ctx.trailer("x-sum", "42").text("whole"); });
    app.get("/empty", [](tern::context& ctx) { ctx.trailer("grpc-status", "0"); });
    app.get("/stream", [](tern::context& ctx) {
        ctx.trailer("x-from-context", "1");
        auto out = ctx.stream();
        out.write("streamed");
        out.trailer("x-count", "1");
        out.end();
    });
    app.get("/plain", [](tern::context& ctx) { ctx.text("plain"); });
    app.post("/echo-trailers", [](tern::context& ctx) {
        std::string out(ctx.body());
        out += '|';
        for (const auto& t : ctx.trailers()) {
            out += std::string(t.name) + "=" + std::string(t.value) + ";";
        }
        ctx.text(out);
    });
}

// A QPACK integer of `prefix` bits (RFC 9204 4.1.1, RFC 7541 5.1) whose first byte carries
// `first` above the prefix.
void qpack_integer(std::vector<std::uint8_t>& out, std::uint8_t first, int prefix,
                   std::size_t value) {
    const std::size_t max = (std::size_t{1} << prefix) - 1;
    if (value < max) {
        out.push_back(static_cast<std::uint8_t>(first | value));
        return;
    }
    out.push_back(static_cast<std::uint8_t>(first | max));
    value -= max;
    while (value >= 128) {
        out.push_back(static_cast<std::uint8_t>(value % 128 + 128));
        value /= 128;
    }
    out.push_back(static_cast<std::uint8_t>(value));
}

// A HEADERS frame of one field `name: value` (QPACK without a dynamic table: the field
// section prefix, then a literal field line with a literal name, RFC 9204 4.5.6).
std::vector<std::uint8_t> trailer_frame(std::string_view name, std::string_view value) {
    std::vector<std::uint8_t> section = {0x00, 0x00};
    qpack_integer(section, 0x20, 3, name.size());
    section.insert(section.end(), name.begin(), name.end());
    qpack_integer(section, 0x00, 7, value.size());
    section.insert(section.end(), value.begin(), value.end());
    REQUIRE(section.size() < 16384);
    std::vector<std::uint8_t> frame = {0x01};  // HEADERS; a 2-byte QUIC varint length
    frame.push_back(static_cast<std::uint8_t>(0x40 | (section.size() >> 8)));
    frame.push_back(static_cast<std::uint8_t>(section.size() & 0xff));
    frame.insert(frame.end(), section.begin(), section.end());
    return frame;
}

// POSTs "abc" to /echo-trailers with `trailers` after it: what came back on the stream.
quic_client::stream_state post_with_trailers(quic_client& c,
                                             const std::vector<std::uint8_t>& trailers) {
    const auto id = c.open_bidi();
    REQUIRE(id >= 0);
    auto bytes = h3_post("/echo-trailers", 3);
    const auto data = h3_data("abc");
    bytes.insert(bytes.end(), data.begin(), data.end());
    bytes.insert(bytes.end(), trailers.begin(), trailers.end());
    c.send(id, bytes, true);
    CHECK(c.pump_until([&] { return c.stream(id).ended || c.stream(id).reset; }, 10s));
    INFO(c.close_reason());
    return c.stream(id);
}

}  // namespace

TEST_CASE(
    "h3 trailers: a response's trailers follow its body in a HEADERS frame that ends the "
    "stream",
    "[http3][trailers]") {
    quic_app server({}, routes);
    quic_client c(server.port);
    start_h3(c);
    for (const auto& [path, body] : {std::pair<const char*, const char*>{"/whole", "whole"},
                                     {"/empty", ""},
                                     {"/stream", "streamed"}}) {
        INFO(path);
        const auto s = h3_fetch(c, path);
        CHECK(s.ended);
        CHECK_FALSE(s.reset);
        CHECK(h3_body(s.bytes) == body);
        CHECK(h3_statuses(s.bytes) == std::vector<int>{200, 0});  // the head, then trailers
    }
    const auto plain = h3_fetch(c, "/plain");
    CHECK(h3_statuses(plain.bytes) == std::vector<int>{200});
    CHECK(h3_body(plain.bytes) == "plain");
}

TEST_CASE("h3 trailers: a request's trailing HEADERS reach the handler", "[http3][trailers]") {
    quic_app server({}, routes);
    quic_client c(server.port);
    start_h3(c);
    const auto s = post_with_trailers(c, trailer_frame("x-t", "1"));
    CHECK(h3_statuses(s.bytes) == std::vector<int>{200});
    CHECK(h3_body(s.bytes) == "abc|x-t=1;");
}

TEST_CASE(
    "h3 trailers: request trailers over max_header_size get 431 on their stream, and the "
    "connection and the server go on",
    "[http3][trailers][limits]") {
    tern::config cfg;
    cfg.limits.max_header_size = 256;
    quic_app server(cfg, routes);
    quic_client c(server.port);
    start_h3(c);
    const auto s = post_with_trailers(c, trailer_frame("x-big", std::string(300, 'b')));
    // 431 is not in QPACK's static table (h3_statuses reads it as 0): its body says it.
    CHECK(h3_statuses(s.bytes).size() == 1);
    CHECK(h3_body(s.bytes) == "Request Header Fields Too Large");
    // The same connection, then another client.
    CHECK(h3_body(h3_fetch(c, "/").bytes) == "hi");
    quic_client other(server.port);
    start_h3(other);
    CHECK(h3_body(h3_fetch(other, "/").bytes) == "hi");
}

}  // namespace wire_test_h3_trailers

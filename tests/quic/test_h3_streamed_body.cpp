// tern::streamed_body over HTTP/3 (step 1 of docs/plans/streamed-request-bodies.md): the body
// is read whole first, as on any HTTP/3 route, and the reader hands it over as one piece.
// Built only with TERN_HTTP3.

#include <catch2/catch.hpp>

#include "support/quic_app.hpp"
#include "support/quic_client.hpp"

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace wire_test_h3_streamed_body {

using namespace std::chrono_literals;
using tern_test::h3_body;
using tern_test::h3_data;
using tern_test::h3_post;
using tern_test::h3_statuses;
using tern_test::quic_app;
using tern_test::quic_client;
using tern_test::start_h3;

namespace {

void routes(tern::app& app) {
    app.post("/pieces", tern::streamed_body([](tern::context& ctx) -> tern::task {
                 tern::body_reader body = ctx.body_reader();
                 std::string got;
                 int pieces = 0;
                 while (std::optional<std::string_view> piece = co_await body.next()) {
                     got.append(*piece);
                     ++pieces;
                 }
                 ctx.text(std::to_string(pieces) + " " + got);
             }));
}

}  // namespace

TEST_CASE("h3: a streamed_body route gets the right bytes, as one piece",
          "[http3][streamed-body]") {
    quic_app server({}, routes);
    quic_client c(server.port);
    start_h3(c);
    const auto id = c.open_bidi();
    REQUIRE(id >= 0);
    auto bytes = h3_post("/pieces", 11);
    for (const char* part : {"hello", " world"}) {
        const auto data = h3_data(part);
        bytes.insert(bytes.end(), data.begin(), data.end());
    }
    c.send(id, bytes, true);
    CHECK(c.pump_until([&] { return c.stream(id).ended || c.stream(id).reset; }, 10s));
    const auto& s = c.stream(id);
    CHECK(h3_statuses(s.bytes) == std::vector<int>{200});
    CHECK(h3_body(s.bytes) == "1 hello world");
}

}  // namespace wire_test_h3_streamed_body

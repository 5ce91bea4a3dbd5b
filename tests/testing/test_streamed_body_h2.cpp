// tern::streamed_body over HTTP/2 through the kit's client (nghttp2's session, which keeps to
// the flow-control windows): the body reaches the handler in pieces as it arrives, each
// piece's window given back when the reader asks again (step 2 of
// docs/plans/streamed-request-bodies.md; the raw-frame tests of the windows are
// tests/integration/test_h2_streamed_bodies.cpp).

#include <catch2/catch.hpp>

#include <tern/tern.hpp>
#include <tern/testing.hpp>
#include "support/fnv.hpp"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace kit_test_streamed_body_h2 {

using tern::testing::client_options;

namespace {

using tern_test::fnv;

void add_routes(tern::app& app) {
    app.post("/sum",
             tern::body_limit(
                 std::size_t{64} << 20, tern::streamed_body([](tern::context& ctx) -> tern::task {
                     tern::body_reader body = ctx.body_reader();
                     std::uint64_t h = 14695981039346656037ull;
                     std::size_t n = 0;
                     int pieces = 0;
                     while (std::optional<std::string_view> piece = co_await body.next()) {
                         h = fnv(*piece, h);
                         n += piece->size();
                         ++pieces;
                     }
                     ctx.text(std::string(ctx.protocol()) + " bytes=" + std::to_string(n) +
                              " hash=" + std::to_string(h) + " pieces=" + std::to_string(pieces));
                 })));
    app.post(
        "/cb", tern::streamed_body([](tern::context& ctx) {
            auto reply = ctx.defer();
            auto body = std::make_shared<tern::body_reader>(ctx.body_reader());
            body->next([reply, body](std::optional<std::string_view> piece, std::error_code) {
                const std::string first(piece.value_or("-"));
                body->next([reply, first](std::optional<std::string_view> end, std::error_code ec) {
                    reply.complete([first, done = !end && !ec](tern::context& c) {
                        c.text(first + (done ? " end" : " more"));
                    });
                });
            });
        }));
}

}  // namespace

TEST_CASE("a streamed_body coroutine route gets the right bytes of 5 MiB over HTTP/2, in pieces",
          "[kit][h2][streamed-body]") {
    tern::app app;
    add_routes(app);
    tern::testing::server server(app);
    auto http = server.make_client(client_options{.http2 = true});
    std::string body(5 << 20, '\0');
    for (std::size_t i = 0; i < body.size(); ++i) body[i] = static_cast<char>(i * 7 % 251);
    const auto r = http.post("/sum", body);
    CHECK(r.status == 200);
    CHECK(r.protocol == "HTTP/2");
    const std::string expected =
        "HTTP/2 bytes=" + std::to_string(body.size()) + " hash=" + std::to_string(fnv(body));
    CHECK(r.body.substr(0, expected.size()) == expected);
    // One stream window (64 KiB) at most per piece: many pieces.
    const auto pieces = std::stoul(r.body.substr(r.body.rfind('=') + 1));
    CHECK(pieces >= body.size() / 65535);
}

TEST_CASE("a streamed_body callback route gets the right bytes over HTTP/2",
          "[kit][h2][streamed-body]") {
    tern::app app;
    add_routes(app);
    tern::testing::server server(app);
    auto http = server.make_client(client_options{.http2 = true});
    const auto r = http.post("/cb", "hello over h2");
    CHECK(r.status == 200);
    CHECK(r.body == "hello over h2 end");
}

}  // namespace kit_test_streamed_body_h2

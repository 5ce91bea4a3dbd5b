// tern::streamed_body over HTTP/2 (step 1 of docs/plans/streamed-request-bodies.md): the
// body is read whole first, as on any HTTP/2 route, and the reader hands it over as one
// piece, so a streamed route works on every protocol; its own backpressure is step 2.

#include <catch2/catch.hpp>
#include <tern/tern.hpp>
#include <tern/testing.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace kit_test_streamed_body_h2 {

using tern::testing::client_options;

namespace {

std::uint64_t fnv(std::string_view s, std::uint64_t h = 14695981039346656037ull) {
    for (const char c : s) {
        h ^= static_cast<unsigned char>(c);
        h *= 1099511628211ull;
    }
    return h;
}

void add_routes(tern::app& app) {
    app.post("/sum", tern::streamed_body([](tern::context& ctx) -> tern::task {
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
             }));
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

TEST_CASE("a streamed_body coroutine route gets the right bytes over HTTP/2, as one piece",
          "[kit][h2][streamed-body]") {
    tern::app app;
    add_routes(app);
    tern::testing::server server(app);
    auto http = server.make_client(client_options{.http2 = true});
    std::string body(300'000, '\0');
    for (std::size_t i = 0; i < body.size(); ++i) body[i] = static_cast<char>(i * 7 % 251);
    const auto r = http.post("/sum", body);
    CHECK(r.status == 200);
    CHECK(r.protocol == "HTTP/2");
    CHECK(r.body == "HTTP/2 bytes=300000 hash=" + std::to_string(fnv(body)) + " pieces=1");
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

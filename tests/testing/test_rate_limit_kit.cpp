// tern::rate_limit over real sockets, HTTP/1.1 and HTTP/2 (h2c) alike: the burst goes
// through with the RateLimit fields, the next request is answered 429 with Retry-After and
// the fields, the connection and other routes are still served, keys from a header are
// apart, and app.error(429) shapes the answer.

#include <catch2/catch.hpp>
#include <tern/tern.hpp>
#include <tern/testing.hpp>

#include <chrono>
#include <stdexcept>
#include <string>

namespace kit_test_rate_limit_kit {

using namespace std::chrono_literals;

namespace {

void add_routes(tern::app& app) {
    app.before("/limited/*", tern::rate_limit({.requests = 3, .per = 1h}));
    app.before("/by-key",
               tern::rate_limit({.requests = 1,
                                 .per = 1h,
                                 .key =
                                     [](tern::context& ctx) {
                                         return std::string(ctx.header("x-api-key").value_or(""));
                                     },
                                 .name = "keys"}));
    app.get("/limited/a", [](tern::context& ctx) { ctx.text("a"); });
    app.get("/by-key", [](tern::context& ctx) { ctx.text("k"); });
    app.get("/free", [](tern::context& ctx) { ctx.text("free"); });
}

void check_limits(tern::testing::client& http) {
    for (int i = 0; i < 3; ++i) {
        const auto r = http.get("/limited/a");
        INFO(i);
        CHECK(r.status == 200);
        CHECK(r.body == "a");
        CHECK(r.header("RateLimit-Policy") == "\"default\";q=3;w=3600");
        CHECK(r.header("RateLimit") ==
              "\"default\";r=" + std::to_string(2 - i) + ";t=" + std::to_string(1200 * (i + 1)));
    }
    const auto refused = http.get("/limited/a");
    CHECK(refused.status == 429);
    CHECK(refused.body == "Too Many Requests");
    CHECK(refused.header("Retry-After") == "1200");
    CHECK(refused.header("RateLimit") == "\"default\";r=0;t=3600");
    CHECK(refused.header("RateLimit-Policy") == "\"default\";q=3;w=3600");
    // The same connection goes on, and a route without the filter is not limited.
    for (int i = 0; i < 5; ++i) {
        const auto r = http.get("/free");
        CHECK(r.status == 200);
        CHECK_FALSE(r.header("RateLimit").has_value());
    }
    // Keys from a header: apart from each other; no key, no limit.
    CHECK(http.get("/by-key", {{"X-Api-Key", "one"}}).status == 200);
    CHECK(http.get("/by-key", {{"X-Api-Key", "one"}}).status == 429);
    CHECK(http.get("/by-key", {{"X-Api-Key", "two"}}).status == 200);
    CHECK(http.get("/by-key").status == 200);
    CHECK(http.get("/by-key").status == 200);
    CHECK(http.get("/by-key", {{"X-Api-Key", "one"}}).header("RateLimit-Policy") ==
          "\"keys\";q=1;w=3600");
}

}  // namespace

TEST_CASE("rate_limit answers 429 with Retry-After and the RateLimit fields, HTTP/1.1",
          "[kit][rate_limit]") {
    tern::app app;
    app.threads(1);  // one event loop: one table
    add_routes(app);
    tern::testing::server server(app);
    auto http = server.make_client();
    check_limits(http);
}

TEST_CASE("rate_limit answers 429 with Retry-After and the RateLimit fields, HTTP/2",
          "[kit][rate_limit][h2]") {
    tern::app app;
    app.threads(1);
    add_routes(app);
    tern::testing::server server(app);
    auto http = server.make_client({.http2 = true});
    check_limits(http);
    CHECK(server.app().stats().h2_connections == 1);  // every request on one connection
}

TEST_CASE("rate_limit's 429 goes through app.error(429) and keeps its fields",
          "[kit][rate_limit]") {
    tern::app app;
    app.threads(1);
    app.before(tern::rate_limit({.requests = 1, .per = 1min}));
    app.get("/", [](tern::context& ctx) { ctx.text("ok"); });
    app.error(429, [](tern::context& ctx) { ctx.text("slow down"); });
    tern::testing::server server(app);
    auto http = server.make_client();
    CHECK(http.get("/").status == 200);
    const auto r = http.get("/");
    CHECK(r.status == 429);
    CHECK(r.body == "slow down");
    CHECK(r.header("Retry-After") == "60");
}

TEST_CASE("rate_limit refuses settings that cannot work", "[kit][rate_limit]") {
    CHECK_THROWS_AS(tern::rate_limit({.requests = 0}), std::invalid_argument);
    CHECK_THROWS_AS(tern::rate_limit({.per = 0ms}), std::invalid_argument);
    CHECK_THROWS_AS(tern::rate_limit({.max_keys = 0}), std::invalid_argument);
}

}  // namespace kit_test_rate_limit_kit

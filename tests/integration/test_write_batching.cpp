// Responses to requests that arrive in one read go out in one write, counted by the
// server's own statistics (a socket-level observation would depend on TCP timing).

#include "support/test_server.hpp"

#include <catch2/catch.hpp>

#include <string>

namespace wire_test_write_batching {

using namespace tern_test;

namespace {

void echo_routes(tern::app& app) {
    app.get("/n/{i}", [](tern::context& ctx) { ctx.text(std::string(ctx.path_param("i"))); });
}

}  // namespace

TEST_CASE("ten pipelined requests sent in one write are answered with one write",
          "[wire][pipelining][stats]") {
    test_server server(echo_routes);
    raw_client c = server.client();
    // Warm up the connection so the measured batch is the only activity on it.
    c.send(get_request("/n/0"));
    REQUIRE(c.read_response().body == "0");
    const auto before = server.app().stats();

    std::string batch;
    for (int i = 1; i <= 10; ++i) batch += get_request("/n/" + std::to_string(i));
    c.send(batch);
    for (int i = 1; i <= 10; ++i) CHECK(c.read_response().body == std::to_string(i));

    const auto after = server.app().stats();
    CHECK(after.requests - before.requests == 10);
    CHECK(after.writes - before.writes == 1);
}

TEST_CASE("pipelined responses past 64 KiB go out in several writes, all in order",
          "[wire][pipelining][stats]") {
    // A few bytes of requests can ask for many large responses; the server writes what it
    // has once it passes 64 KiB and parses the rest of the batch after that write, so one
    // read cannot make it buffer them all.
    test_server server([](tern::app& app) {
        app.get("/big/{i}", [](tern::context& ctx) {
            ctx.text(std::string(ctx.path_param("i")) + std::string(10000, '.'));
        });
    });
    raw_client c = server.client();
    const auto before = server.app().stats();
    std::string batch;
    for (int i = 0; i < 40; ++i) batch += get_request("/big/" + std::to_string(i));
    c.send(batch);
    for (int i = 0; i < 40; ++i) {
        CHECK(c.read_response().body == std::to_string(i) + std::string(10000, '.'));
    }
    const auto after = server.app().stats();
    CHECK(after.requests - before.requests == 40);
    // 40 x ~10 KB = ~400 KB in batches of a little over 64 KiB: at least 6 writes.
    CHECK(after.writes - before.writes >= 6);
}

TEST_CASE("stats count accepted connections, requests and open connections", "[wire][stats]") {
    test_server server(echo_routes);
    CHECK(server.app().stats().requests == 0);
    {
        raw_client a = server.client();
        raw_client b = server.client();
        a.send(get_request("/n/1"));
        b.send(get_request("/n/2"));
        CHECK(a.read_response().status == 200);
        CHECK(b.read_response().status == 200);
        const auto s = server.app().stats();
        CHECK(s.connections_accepted == 2);
        CHECK(s.open_connections == 2);
        CHECK(s.requests == 2);
        CHECK(s.connections_refused == 0);
    }
    tern::app idle;
    CHECK(idle.stats().connections_accepted == 0);
}

}  // namespace wire_test_write_batching

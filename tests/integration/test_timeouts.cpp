// Slow and stalled clients, one per deadline. Timeouts are set short so the tests are quick;
// the assertions are on what the client receives, never on how long it took.

#include "support/eventually.hpp"
#include "support/test_server.hpp"

#include <catch2/catch.hpp>

#include <chrono>
#include <string>
#include <thread>

namespace wire_test_timeouts {

using namespace tern_test;
using namespace std::chrono_literals;

namespace {

tern::config short_timeouts() {
    tern::config cfg = test_config();
    cfg.timeouts.first_byte = 300ms;
    cfg.timeouts.header = 400ms;
    cfg.timeouts.body_idle = 300ms;
    cfg.timeouts.keep_alive = 300ms;
    cfg.timeouts.write = 300ms;
    return cfg;
}

void routes(tern::app& app) {
    app.get("/", [](tern::context& ctx) { ctx.text("ok"); });
    app.put("/echo", [](tern::context& ctx) { ctx.text(std::string(ctx.body())); });
    app.get("/huge", [](tern::context& ctx) { ctx.result(std::string(64 << 20, 'x')); });
}

// Sends `bytes` one at a time, `gap` apart, until the server answers or closes. Returns
// how many bytes were sent.
std::size_t trickle(raw_client& c, const std::string& bytes, std::chrono::milliseconds gap) {
    std::size_t sent = 0;
    while (sent < bytes.size() && !c.answered_within(gap)) {
        c.send(bytes.substr(sent, 1));
        ++sent;
    }
    return sent;
}

}  // namespace

TEST_CASE("a connection that sends nothing is closed without an answer", "[wire][timeouts]") {
    test_server server(routes, short_timeouts());
    raw_client c = server.client();
    CHECK(c.closed_by_peer());
    CHECK(c.buffered().empty());
    check_still_serving(server.port());
}

TEST_CASE("headers trickled one byte at a time get 408 at the total header deadline",
          "[wire][timeouts]") {
    test_server server(routes, short_timeouts());
    raw_client c = server.client();
    // Each byte arrives well within any per-read timer; only a total deadline stops this.
    std::string endless = "GET / HTTP/1.1\r\nHost: x\r\n";
    for (int i = 0; i < 400; ++i) endless += "X-Slow-" + std::to_string(i) + ": y\r\n";
    const auto sent = trickle(c, endless, 20ms);
    CHECK(sent < endless.size());  // the server answered before the client ran out
    const response r = c.read_response();
    CHECK(r.status == 408);
    check_closed_and_still_serving(c, r, server.port());
}

TEST_CASE("a body that stalls gets 408 after the body idle timeout", "[wire][timeouts]") {
    test_server server(routes, short_timeouts());
    raw_client c = server.client();
    c.send("PUT /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\nabc");
    const response r = c.read_response();
    CHECK(r.status == 408);
    check_closed_and_still_serving(c, r, server.port());
}

TEST_CASE("a body that keeps arriving is not cut by the body idle timeout", "[wire][timeouts]") {
    tern::config cfg = short_timeouts();
    cfg.timeouts.header = 10s;  // only the body's idle timer is under test
    cfg.timeouts.body_idle = 2s;
    test_server server(routes, cfg);
    raw_client c = server.client();
    c.send("PUT /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 8\r\n\r\n");
    // Each byte comes well inside the idle timeout.
    CHECK(trickle(c, "trickled", 50ms) == 8);
    const response r = c.read_response();
    CHECK(r.status == 200);
    CHECK(r.body == "trickled");
}

TEST_CASE("an idle keep-alive connection is closed silently", "[wire][timeouts]") {
    test_server server(routes, short_timeouts());
    raw_client c = server.client();
    c.send(get_request("/"));
    CHECK(c.read_response().status == 200);
    CHECK(c.closed_by_peer());
    CHECK(c.buffered().empty());
    check_still_serving(server.port());
}

TEST_CASE("a client that stops reading a large response is disconnected", "[wire][timeouts]") {
    test_server server(routes, short_timeouts());
    raw_client c = server.client();
    c.send(get_request("/huge"));
    // Read nothing until the server has answered and then given up on the stalled write
    // (its connection count back to 0), however long building the body took on a busy
    // machine (a fixed sleep of 1.5 s once ran out under ASan).
    CHECK(eventually([&] { return server.app().stats().requests == 1; }, 30s));
    CHECK(eventually([&] { return server.app().stats().open_connections == 0; }, 30s));
    const std::string got = c.read_all_until_close(30s);
    CHECK(got.size() < (64u << 20));  // the body was cut short: the write was abandoned
    check_still_serving(server.port());
}

namespace {

// A short header deadline and a long body idle timeout: a body that waits longer than the
// first but not the second must be read.
tern::config short_head_long_body() {
    tern::config cfg = test_config();
    cfg.timeouts.header = 200ms;
    cfg.timeouts.body_idle = 5s;
    return cfg;
}

}  // namespace

TEST_CASE("after 100 Continue the body is waited for by the body idle timeout, not the header one",
          "[wire][timeouts][expect]") {
    test_server server(routes, short_head_long_body());
    raw_client c = server.client();
    const bool chunked = GENERATE(false, true);
    INFO((chunked ? "chunked" : "Content-Length"));
    c.send(std::string("PUT /echo HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\n") +
           (chunked ? "Transfer-Encoding: chunked\r\n" : "Content-Length: 10\r\n") + "\r\n");
    REQUIRE(c.read_response().status == 100);
    // Well past the header deadline, well inside the body idle timeout: nothing comes back.
    CHECK_FALSE(c.answered_within(1000ms));
    c.send(chunked ? "a\r\n0123456789\r\n0\r\n\r\n" : "0123456789");
    const response r = c.read_response();
    CHECK(r.status == 200);
    CHECK(r.body == "0123456789");
}

TEST_CASE("after 100 Continue a body that never comes gets 408 and the close",
          "[wire][timeouts][expect]") {
    tern::config cfg = short_head_long_body();
    cfg.timeouts.body_idle = 1500ms;
    test_server server(routes, cfg);
    raw_client c = server.client();
    c.send("PUT /echo HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 10\r\n\r\n");
    REQUIRE(c.read_response().status == 100);
    CHECK_FALSE(c.answered_within(700ms));  // the header deadline has long passed
    const response r = c.read_response();
    CHECK(r.status == 408);
    check_closed_and_still_serving(c, r, server.port());
}

TEST_CASE("a body pipelined behind an answered request is waited for by the body idle timeout",
          "[wire][timeouts]") {
    // The first request is answered and written while the second's headers and part of its
    // body are already in; the rest of that body comes after the header deadline has passed.
    test_server server(routes, short_head_long_body());
    raw_client c = server.client();
    c.send(get_request("/") + "PUT /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\n01234");
    const response first = c.read_response();
    CHECK(first.status == 200);
    CHECK(first.body == "ok");
    CHECK_FALSE(c.answered_within(1000ms));
    c.send("56789");
    const response second = c.read_response();
    CHECK(second.status == 200);
    CHECK(second.body == "0123456789");
}

TEST_CASE("a head pipelined behind an answered request keeps its header deadline",
          "[wire][timeouts]") {
    // The transition back to reading must not give a half-sent head the keep-alive time.
    tern::config cfg = short_head_long_body();
    cfg.timeouts.keep_alive = 60s;
    test_server server(routes, cfg);
    raw_client c = server.client();
    c.send(get_request("/") + "GET / HTTP/1.1\r\nHost: x\r\n");
    CHECK(c.read_response().status == 200);
    const response r = c.read_response();
    CHECK(r.status == 408);
    check_closed_and_still_serving(c, r, server.port());
}

TEST_CASE("a body pipelined behind a blocking handler is waited for by the body idle timeout",
          "[wire][timeouts][blocking]") {
    // The second request's head and part of its body wait unparsed while the blocking
    // handler runs; they are parsed when it resumes, and the rest of the body comes after
    // the header deadline has passed.
    test_server server(
        [](tern::app& app) {
            routes(app);
            app.get("/slow", tern::blocking([](tern::context& ctx) {
                        std::this_thread::sleep_for(50ms);
                        ctx.text("slow");
                    }));
        },
        short_head_long_body());
    raw_client c = server.client();
    c.send(get_request("/slow") + "PUT /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\n\r\nab");
    const response first = c.read_response();
    CHECK(first.status == 200);
    CHECK(first.body == "slow");
    CHECK_FALSE(c.answered_within(1000ms));
    c.send("cd");
    const response second = c.read_response();
    CHECK(second.status == 200);
    CHECK(second.body == "abcd");
}

}  // namespace wire_test_timeouts

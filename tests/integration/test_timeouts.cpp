// Slow and stalled clients, one per deadline. Timeouts are set short so the tests are quick;
// the assertions are on what the client receives, never on how long it took.

#include "support/test_server.hpp"

#include <catch2/catch.hpp>

#include <chrono>
#include <string>
#include <thread>

using namespace tern_test;
using namespace std::chrono_literals;

namespace {

tern::config short_timeouts() {
    tern::config cfg = test_config();
    cfg.first_byte_timeout = 300ms;
    cfg.header_timeout = 400ms;
    cfg.body_idle_timeout = 300ms;
    cfg.keep_alive_timeout = 300ms;
    cfg.write_timeout = 300ms;
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
    cfg.header_timeout = 10s;  // only the body's idle timer is under test
    cfg.body_idle_timeout = 2s;
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
    // Read nothing until the server has had ample time to give up on the stalled write.
    std::this_thread::sleep_for(1500ms);
    const std::string got = c.read_all_until_close(30s);
    CHECK(got.size() < (64u << 20));  // the body was cut short: the write was abandoned
    check_still_serving(server.port());
}

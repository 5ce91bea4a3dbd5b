// Pipelining (RFC 9112 §9.3.2): requests sent back to back without waiting are answered
// in order, however the bytes are split across reads.

#include <catch2/catch.hpp>
#include <stdexcept>
#include <string>

#include "support/raw_client.hpp"
#include "support/test_server.hpp"

namespace wire_test_pipelining {

using namespace tern_test;

namespace {

// Ten distinct routes /r0 .. /r9, each answering its own name, plus an echo and a thrower.
void routes(tern::app& app) {
    for (int i = 0; i < 10; ++i) {
        const std::string name = "r" + std::to_string(i);
        app.get("/" + name, [name](tern::context& ctx) { ctx.text(name); });
    }
    app.put("/echo", [](tern::context& ctx) { ctx.result(std::string(ctx.body())); });
    app.get("/throw", [](tern::context&) { throw std::runtime_error("boom"); });
}

}  // namespace

TEST_CASE("ten pipelined requests in one send are answered in order", "[wire][pipelining]") {
    test_server server(routes);
    raw_client c = server.client();
    std::string batch;
    // Out of numeric order, so an in-order answer cannot come from sorting by route.
    const int order[] = {3, 0, 9, 1, 8, 2, 7, 4, 6, 5};
    for (int i : order) batch += get_request("/r" + std::to_string(i));
    c.send(batch);
    for (int i : order) {
        const response r = c.read_response();
        INFO("expected r" << i << ": " << describe(r));
        CHECK(r.status == 200);
        CHECK(r.body == "r" + std::to_string(i));
    }
    CHECK_FALSE(c.closed_by_peer(std::chrono::milliseconds(100)));
    CHECK(c.buffered().empty());
}

TEST_CASE("a pipeline split in the middle of a request across two sends is answered",
          "[wire][pipelining]") {
    test_server server(routes);
    raw_client c = server.client();
    const std::string batch = get_request("/r1") + get_request("/r2") + get_request("/r3");
    // Split inside the second request's header block.
    const std::size_t cut = get_request("/r1").size() + 20;
    c.send(std::string_view(batch).substr(0, cut));
    const response first = c.read_response();
    CHECK(first.body == "r1");
    c.send(std::string_view(batch).substr(cut));
    CHECK(c.read_response().body == "r2");
    CHECK(c.read_response().body == "r3");
}

TEST_CASE("a pipeline sent one byte at a time is answered in order", "[wire][pipelining]") {
    test_server server(routes);
    raw_client c = server.client();
    const std::string batch = get_request("/r4") + get_request("/r5");
    for (char byte : batch) c.send(std::string_view(&byte, 1));
    CHECK(c.read_response().body == "r4");
    CHECK(c.read_response().body == "r5");
}

TEST_CASE("pipelined requests with bodies are framed by their Content-Length",
          "[wire][pipelining]") {
    test_server server(routes);
    raw_client c = server.client();
    c.send(body_request("PUT", "/echo", "first body") + get_request("/r0") +
           body_request("PUT", "/echo", "GET /r9 HTTP/1.1\r\n\r\n") + get_request("/r1"));
    CHECK(c.read_response().body == "first body");
    CHECK(c.read_response().body == "r0");
    // A body that looks like a request is still only a body.
    CHECK(c.read_response().body == "GET /r9 HTTP/1.1\r\n\r\n");
    CHECK(c.read_response().body == "r1");
}

TEST_CASE("a pipelined request whose handler throws does not break the ones after it",
          "[wire][pipelining]") {
    test_server server(routes);
    raw_client c = server.client();
    c.send(get_request("/r0") + get_request("/throw") + get_request("/r1"));
    CHECK(c.read_response().body == "r0");
    const response failed = c.read_response();
    CHECK(failed.status == 500);
    CHECK(failed.body == "Internal Server Error");
    const response after = c.read_response();
    CHECK(after.status == 200);
    CHECK(after.body == "r1");
}

TEST_CASE(
    "a malformed request in a pipeline is answered 400 after the ones before it, then "
    "the connection closes",
    "[wire][pipelining]") {
    test_server server(routes);
    raw_client c = server.client();
    c.send(get_request("/r0") + "NOT A REQUEST\r\n\r\n" + get_request("/r1"));
    const response first = c.read_response();
    CHECK(first.status == 200);
    CHECK(first.body == "r0");
    const response bad = c.read_response();
    INFO(describe(bad));
    CHECK(bad.status == 400);
    check_common_headers(bad);
    check_closed_and_still_serving(c, bad, server.port());
}

TEST_CASE("pipelined requests to unknown paths are answered 404 in order", "[wire][pipelining]") {
    test_server server(routes);
    raw_client c = server.client();
    c.send(get_request("/nope") + get_request("/r2") + get_request("/nope/again"));
    CHECK(c.read_response().status == 404);
    CHECK(c.read_response().body == "r2");
    CHECK(c.read_response().status == 404);
}

}  // namespace wire_test_pipelining

// HEAD answered by the GET handler without a body (RFC 9110 §9.3.2), OPTIONS answered
// automatically with 204 + Allow (§9.3.7), and explicit routes overriding both. Each test
// pipelines a second request right behind, so any stray body byte would break its parse.

#include <atomic>
#include <catch2/catch.hpp>
#include <string>

#include "support/raw_client.hpp"
#include "support/test_server.hpp"

namespace wire_test_head_options {

using namespace tern_test;

namespace {

std::string head_request(std::string_view target) {
    return "HEAD " + std::string(target) + " HTTP/1.1\r\nHost: localhost\r\n\r\n";
}

std::string options_request(std::string_view target) {
    return "OPTIONS " + std::string(target) + " HTTP/1.1\r\nHost: localhost\r\n\r\n";
}

}  // namespace

TEST_CASE("HEAD on a GET route runs the GET handler and sends its headers without the body",
          "[wire][head-options]") {
    std::atomic<int> calls{0};
    test_server server([&](tern::app& app) {
        app.get("/page", [&](tern::context& ctx) {
            ++calls;
            ctx.header("X-Handler", "get");
            ctx.text("a page body of some length");
        });
    });
    raw_client c = server.client();

    c.send(get_request("/page"));
    const response get = c.read_response();
    REQUIRE(get.status == 200);
    REQUIRE(get.header("Content-Length").has_value());

    // HEAD and a GET pipelined behind it: the GET's status line must follow the HEAD's
    // header block immediately.
    c.send(head_request("/page") + get_request(alive_path));
    const response head = c.read_response(/*head_request=*/true);
    INFO(describe(head));
    CHECK(head.status == 200);
    CHECK(head.header("Content-Length") == get.header("Content-Length"));
    CHECK(head.header("X-Handler") == "get");
    check_common_headers(head);
    const response next = c.read_response();
    INFO(describe(next));
    CHECK(next.status == 200);
    CHECK(next.body == "alive");
    CHECK(calls.load() == 2);
}

TEST_CASE("HEAD on an unknown path gets a 404 without a body", "[wire][head-options]") {
    test_server server;
    raw_client c = server.client();
    c.send(head_request("/missing") + get_request(alive_path));
    const response head = c.read_response(/*head_request=*/true);
    INFO(describe(head));
    CHECK(head.status == 404);
    const response next = c.read_response();
    CHECK(next.body == "alive");
}

TEST_CASE("an explicit HEAD route overrides the GET handler", "[wire][head-options]") {
    test_server server([](tern::app& app) {
        app.get("/x", [](tern::context& ctx) {
            ctx.header("X-Handler", "get");
            ctx.text("from get");
        });
        app.head("/x", [](tern::context& ctx) {
            ctx.header("X-Handler", "head");
            ctx.text("abc");
        });
    });
    raw_client c = server.client();
    c.send(head_request("/x") + get_request("/x"));
    const response head = c.read_response(/*head_request=*/true);
    INFO(describe(head));
    CHECK(head.status == 200);
    CHECK(head.header("X-Handler") == "head");
    CHECK(head.header("Content-Length") == "3");
    const response get = c.read_response();
    CHECK(get.header("X-Handler") == "get");
    CHECK(get.body == "from get");
}

TEST_CASE("OPTIONS on a route path gets 204 with Allow and no body", "[wire][head-options]") {
    test_server server(
        [](tern::app& app) { app.get("/only-get", [](tern::context& ctx) { ctx.text("g"); }); });
    raw_client c = server.client();
    c.send(options_request("/only-get") + get_request(alive_path));
    const response r = c.read_response();
    INFO(describe(r));
    CHECK(r.status == 204);
    CHECK(r.header("Allow") == "GET, HEAD, OPTIONS");
    CHECK_FALSE(r.header("Content-Length").has_value());
    CHECK_FALSE(r.header("Content-Type").has_value());
    check_common_headers(r);
    const response next = c.read_response();
    CHECK(next.body == "alive");
}

TEST_CASE("OPTIONS lists every method routed on the path", "[wire][head-options]") {
    test_server server([](tern::app& app) {
        app.get("/thing", [](tern::context& ctx) { ctx.text("g"); });
        app.post("/thing", [](tern::context& ctx) { ctx.text("p"); });
        app.del("/thing", [](tern::context& ctx) { ctx.text("d"); });
    });
    raw_client c = server.client();
    c.send(options_request("/thing"));
    const response r = c.read_response();
    INFO(describe(r));
    CHECK(r.status == 204);
    REQUIRE(r.header("Allow").has_value());
    for (const char* method : {"GET", "HEAD", "POST", "DELETE", "OPTIONS"}) {
        CHECK(has_token(*r.header("Allow"), method));
    }
    CHECK_FALSE(has_token(*r.header("Allow"), "PUT"));
}

TEST_CASE("OPTIONS on a POST-only path does not offer HEAD", "[wire][head-options]") {
    test_server server(
        [](tern::app& app) { app.post("/submit", [](tern::context& ctx) { ctx.text("p"); }); });
    raw_client c = server.client();
    c.send(options_request("/submit"));
    const response r = c.read_response();
    INFO(describe(r));
    CHECK(r.status == 204);
    REQUIRE(r.header("Allow").has_value());
    CHECK(has_token(*r.header("Allow"), "POST"));
    CHECK(has_token(*r.header("Allow"), "OPTIONS"));
    CHECK_FALSE(has_token(*r.header("Allow"), "GET"));
    CHECK_FALSE(has_token(*r.header("Allow"), "HEAD"));
}

TEST_CASE("an explicit OPTIONS route overrides the automatic answer", "[wire][head-options]") {
    test_server server([](tern::app& app) {
        app.get("/x", [](tern::context& ctx) { ctx.text("g"); });
        app.options("/x", [](tern::context& ctx) {
            ctx.header("Allow", "GET");
            ctx.text("custom options");
        });
    });
    raw_client c = server.client();
    c.send(options_request("/x"));
    const response r = c.read_response();
    INFO(describe(r));
    CHECK(r.status == 200);
    CHECK(r.body == "custom options");
    CHECK(r.header("Allow") == "GET");
}

TEST_CASE("OPTIONS on an unknown path gets 404", "[wire][head-options]") {
    test_server server;
    raw_client c = server.client();
    c.send(options_request("/missing"));
    const response r = c.read_response();
    CHECK(r.status == 404);
}

}  // namespace wire_test_head_options

// Persistent connections (RFC 9112 §9.3): HTTP/1.1 stays open unless either side says
// `Connection: close`; HTTP/1.0 closes unless the client asks for keep-alive.

#include <atomic>
#include <catch2/catch.hpp>
#include <string>

#include "support/raw_client.hpp"
#include "support/test_server.hpp"

namespace wire_test_keep_alive {

using namespace tern_test;

namespace {

void routes(tern::app& app) {
    app.get("/a", [](tern::context& ctx) { ctx.text("a"); });
    app.get("/b", [](tern::context& ctx) { ctx.text("b"); });
}

bool says_close(const response& r) {
    const auto c = r.header("Connection");
    return c && has_token(*c, "close");
}

}  // namespace

TEST_CASE("an HTTP/1.1 connection stays open by default for a second request",
          "[wire][keep-alive]") {
    test_server server(routes);
    raw_client c = server.client();

    c.send(get_request("/a"));
    const response first = c.read_response();
    INFO(describe(first));
    CHECK(first.status == 200);
    CHECK(first.body == "a");
    CHECK_FALSE(says_close(first));

    c.send(get_request("/b"));
    const response second = c.read_response();
    INFO(describe(second));
    CHECK(second.status == 200);
    CHECK(second.body == "b");
    CHECK_FALSE(says_close(second));
}

TEST_CASE("Connection: close from the client is echoed and the server closes",
          "[wire][keep-alive]") {
    test_server server(routes);
    raw_client c = server.client();
    c.send(get_request("/a", "Connection: close\r\n"));
    const response r = c.read_response();
    INFO(describe(r));
    CHECK(r.status == 200);
    CHECK(r.body == "a");
    check_common_headers(r);
    check_closed_and_still_serving(c, r, server.port());
}

TEST_CASE("the Connection: close token is matched case-insensitively", "[wire][keep-alive]") {
    test_server server(routes);
    raw_client c = server.client();
    c.send(get_request("/a", "connection: CLOSE\r\n"));
    const response r = c.read_response();
    CHECK(r.status == 200);
    check_closed_and_still_serving(c, r, server.port());
}

TEST_CASE("bytes pipelined after a Connection: close request are not processed",
          "[wire][keep-alive]") {
    std::atomic<int> b_calls{0};
    test_server server([&](tern::app& app) {
        app.get("/a", [](tern::context& ctx) { ctx.text("a"); });
        app.get("/b", [&](tern::context& ctx) {
            ++b_calls;
            ctx.text("b");
        });
    });
    raw_client c = server.client();
    c.send(get_request("/a", "Connection: close\r\n") + get_request("/b"));
    const response r = c.read_response();
    INFO(describe(r));
    CHECK(r.status == 200);
    CHECK(r.body == "a");
    CHECK(says_close(r));
    // Only one response, then EOF.
    CHECK(c.read_all_until_close().empty());
    CHECK(b_calls.load() == 0);
    check_still_serving(server.port());
}

TEST_CASE("an HTTP/1.0 request without keep-alive gets Connection: close and the close",
          "[wire][keep-alive]") {
    test_server server(routes);
    raw_client c = server.client();
    c.send("GET /a HTTP/1.0\r\n\r\n");
    const response r = c.read_response();
    INFO(describe(r));
    CHECK(r.status == 200);
    CHECK(r.body == "a");
    // The server answers with its own version (RFC 9110 §6.2).
    CHECK(r.version == "HTTP/1.1");
    check_common_headers(r);
    check_closed_and_still_serving(c, r, server.port());
}

TEST_CASE("an HTTP/1.0 request with Connection: keep-alive keeps the connection open",
          "[wire][keep-alive]") {
    test_server server(routes);
    raw_client c = server.client();

    c.send("GET /a HTTP/1.0\r\nConnection: keep-alive\r\n\r\n");
    const response first = c.read_response();
    INFO(describe(first));
    CHECK(first.status == 200);
    CHECK(first.body == "a");
    REQUIRE(first.header("Connection").has_value());
    CHECK(has_token(*first.header("Connection"), "keep-alive"));

    c.send("GET /b HTTP/1.0\r\nConnection: keep-alive\r\n\r\n");
    const response second = c.read_response();
    INFO(describe(second));
    CHECK(second.status == 200);
    CHECK(second.body == "b");
    REQUIRE(second.header("Connection").has_value());
    CHECK(has_token(*second.header("Connection"), "keep-alive"));
}

TEST_CASE("an HTTP/1.0 keep-alive connection closes after a request that does not ask for it",
          "[wire][keep-alive]") {
    test_server server(routes);
    raw_client c = server.client();
    c.send("GET /a HTTP/1.0\r\nConnection: keep-alive\r\n\r\n");
    CHECK(c.read_response().body == "a");
    c.send("GET /b HTTP/1.0\r\n\r\n");
    const response r = c.read_response();
    CHECK(r.body == "b");
    check_closed_and_still_serving(c, r, server.port());
}

TEST_CASE("a keep-alive connection serves 50 sequential requests", "[wire][keep-alive]") {
    test_server server([](tern::app& app) {
        app.get("/n/{i}", [](tern::context& ctx) { ctx.text(std::string(ctx.path_param("i"))); });
    });
    raw_client c = server.client();
    for (int i = 0; i < 50; ++i) {
        c.send(get_request("/n/" + std::to_string(i)));
        const response r = c.read_response();
        INFO("request " << i << ": " << describe(r));
        REQUIRE(r.status == 200);
        REQUIRE(r.body == std::to_string(i));
        REQUIRE_FALSE(says_close(r));
    }
}

TEST_CASE("a client closing an idle keep-alive connection does not disturb the server",
          "[wire][keep-alive]") {
    test_server server(routes);
    {
        raw_client c = server.client();
        c.send(get_request("/a"));
        CHECK(c.read_response().body == "a");
    }  // closed by the client here
    raw_client half = server.client();
    half.send_raw_and_close("GET /a HTTP/1.1\r\nHo");  // gone mid-request
    check_still_serving(server.port());
}

}  // namespace wire_test_keep_alive

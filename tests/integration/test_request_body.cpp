// Request bodies (RFC 9112 §6): framed by Content-Length or chunked transfer coding, and
// handed to the handler whole and de-chunked, however the bytes arrive.

#include <catch2/catch.hpp>
#include <string>

#include "support/raw_client.hpp"
#include "support/test_server.hpp"

namespace wire_test_request_body {

using namespace tern_test;

namespace {

// PUT /echo answers the body it received; X-Body-Length says how long it was.
void routes(tern::app& app) {
    app.put("/echo", [](tern::context& ctx) {
        ctx.header("X-Body-Length", std::to_string(ctx.body().size()));
        ctx.result(std::string(ctx.body()));
    });
    app.get("/after", [](tern::context& ctx) { ctx.text("after"); });
}

std::string chunked_head(std::string_view target = "/echo") {
    return "PUT " + std::string(target) +
           " HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\n\r\n";
}

}  // namespace

TEST_CASE("a Content-Length body reaches ctx.body()", "[wire][body]") {
    test_server server(routes);
    raw_client c = server.client();
    c.send(body_request("PUT", "/echo", "hello, body"));
    const response r = c.read_response();
    INFO(describe(r));
    CHECK(r.status == 200);
    CHECK(r.body == "hello, body");
    CHECK(r.header("X-Body-Length") == "11");
}

TEST_CASE("a chunked body of several chunks is de-chunked", "[wire][body]") {
    test_server server(routes);
    raw_client c = server.client();
    // Chunk sizes are hex: "a" is ten bytes.
    c.send(chunked_head() + "5\r\nhello\r\n1\r\n,\r\na\r\n chunked! \r\n3\r\nend\r\n0\r\n\r\n");
    const response r = c.read_response();
    INFO(describe(r));
    CHECK(r.status == 200);
    CHECK(r.body == "hello, chunked! end");
    CHECK(r.header("X-Body-Length") == "19");
}

TEST_CASE("a chunked body with only the last chunk is empty", "[wire][body]") {
    test_server server(routes);
    raw_client c = server.client();
    c.send(chunked_head() + "0\r\n\r\n" + get_request("/after"));
    const response r = c.read_response();
    CHECK(r.status == 200);
    CHECK(r.body.empty());
    CHECK(r.header("X-Body-Length") == "0");
    CHECK(c.read_response().body == "after");
}

TEST_CASE("an empty body reaches the handler as empty", "[wire][body]") {
    test_server server(routes);
    raw_client c = server.client();

    SECTION("with Content-Length: 0") { c.send(body_request("PUT", "/echo", "")); }
    SECTION("with no framing headers at all") {
        c.send("PUT /echo HTTP/1.1\r\nHost: localhost\r\n\r\n");
    }
    const response r = c.read_response();
    INFO(describe(r));
    CHECK(r.status == 200);
    CHECK(r.body.empty());
    CHECK(r.header("X-Body-Length") == "0");
    // Nothing was left over to be taken for a request.
    c.send(get_request("/after"));
    CHECK(c.read_response().body == "after");
}

TEST_CASE("a Content-Length body split across several sends is reassembled", "[wire][body]") {
    test_server server(routes);
    raw_client c = server.client();
    c.send("PUT /echo HTTP/1.1\r\nHost: localhost\r\nContent-Length: 14\r\n\r\n");
    c.send("split");
    c.send(" across");
    c.send(" 3");
    const response r = c.read_response();
    INFO(describe(r));
    CHECK(r.body == "split across 3");
}

TEST_CASE("a chunked body split inside chunk sizes and data is reassembled", "[wire][body]") {
    test_server server(routes);
    raw_client c = server.client();
    c.send(chunked_head() + "1");
    c.send("0\r\n0123456");  // chunk size "10" (sixteen bytes) split after its first digit
    c.send("789abcdef\r\n4\r");
    c.send("\nwxyz\r\n0\r");
    c.send("\n\r\n");
    const response r = c.read_response();
    INFO(describe(r));
    CHECK(r.body == "0123456789abcdefwxyz");
}

TEST_CASE("a body with NUL bytes and line ends arrives byte for byte", "[wire][body]") {
    test_server server(routes);
    raw_client c = server.client();
    std::string body("a\0b\r\n\r\nc", 8);
    for (int i = 0; i < 256; ++i) body += static_cast<char>(i);
    c.send(body_request("PUT", "/echo", body));
    const response r = c.read_response();
    CHECK(r.header("X-Body-Length") == std::to_string(body.size()));
    CHECK(r.body == body);
}

TEST_CASE("a large body under the limit is received whole", "[wire][body]") {
    test_server server(routes);
    raw_client c = server.client();
    std::string body;
    body.reserve(1024 * 1024);
    for (std::size_t i = 0; body.size() < 1024 * 1024; ++i) body += std::to_string(i) + ',';
    c.send(body_request("PUT", "/echo", body));
    const response r = c.read_response();
    CHECK(r.status == 200);
    CHECK(r.header("X-Body-Length") == std::to_string(body.size()));
    CHECK(r.body == body);
}

TEST_CASE("a large chunked body is received whole", "[wire][body]") {
    test_server server(routes);
    raw_client c = server.client();
    std::string wire = chunked_head();
    std::string expected;
    const std::string piece(4000, 'x');  // 0xfa0
    for (int i = 0; i < 100; ++i) {
        wire += "fa0\r\n" + piece + "\r\n";
        expected += piece;
    }
    wire += "0\r\n\r\n";
    c.send(wire);
    const response r = c.read_response();
    CHECK(r.status == 200);
    CHECK(r.header("X-Body-Length") == std::to_string(expected.size()));
    CHECK(r.body == expected);
}

TEST_CASE("the connection serves the next request after a body was read", "[wire][body]") {
    test_server server(routes);
    raw_client c = server.client();
    c.send(body_request("PUT", "/echo", "one"));
    CHECK(c.read_response().body == "one");
    c.send(chunked_head() + "3\r\ntwo\r\n0\r\n\r\n");
    CHECK(c.read_response().body == "two");
    c.send(get_request("/after"));
    CHECK(c.read_response().body == "after");
}

TEST_CASE("a client that disconnects in the middle of a body does not disturb the server",
          "[wire][body]") {
    test_server server(routes);
    raw_client c = server.client();
    c.send_raw_and_close(
        "PUT /echo HTTP/1.1\r\nHost: localhost\r\nContent-Length: 100\r\n\r\nonly part");
    check_still_serving(server.port());
}

}  // namespace wire_test_request_body

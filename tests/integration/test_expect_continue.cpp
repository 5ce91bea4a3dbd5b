// Expect: 100-continue (RFC 9110 §10.1.1): the server answers an interim 100 before the
// client sends the body; any other expectation is refused with 417.

#include <catch2/catch.hpp>
#include <string>

#include "support/raw_client.hpp"
#include "support/test_server.hpp"

namespace wire_test_expect_continue {

using namespace tern_test;

namespace {

void routes(tern::app& app) {
    app.put("/echo", [](tern::context& ctx) { ctx.result(std::string(ctx.body())); });
    app.get("/after", [](tern::context& ctx) { ctx.text("after"); });
}

std::string expect_head(std::string_view expectation, std::size_t length) {
    return "PUT /echo HTTP/1.1\r\nHost: localhost\r\nExpect: " + std::string(expectation) +
           "\r\nContent-Length: " + std::to_string(length) + "\r\n\r\n";
}

}  // namespace

TEST_CASE("Expect: 100-continue gets an interim 100 Continue, then the final response",
          "[wire][expect]") {
    test_server server(routes);
    raw_client c = server.client();
    c.send(expect_head("100-continue", 11));

    // Only the headers are sent: the server must answer 100 before the body exists.
    const response interim = c.read_response();
    INFO(describe(interim));
    CHECK(interim.status == 100);
    CHECK(interim.version == "HTTP/1.1");
    CHECK(interim.body.empty());
    CHECK_FALSE(interim.header("Content-Length").has_value());
    CHECK_FALSE(interim.header("Content-Type").has_value());
    CHECK(c.buffered().empty());

    c.send("hello world");
    const response final_response = c.read_response();
    INFO(describe(final_response));
    CHECK(final_response.status == 200);
    CHECK(final_response.body == "hello world");
    check_common_headers(final_response);
}

TEST_CASE("the connection stays usable after a 100-continue exchange", "[wire][expect]") {
    test_server server(routes);
    raw_client c = server.client();
    c.send(expect_head("100-continue", 3));
    REQUIRE(c.read_response().status == 100);
    c.send("abc");
    CHECK(c.read_response().body == "abc");

    c.send(get_request("/after"));
    const response r = c.read_response();
    CHECK(r.status == 200);
    CHECK(r.body == "after");
}

TEST_CASE("a client that sends the body without waiting for 100 Continue is still served",
          "[wire][expect]") {
    // RFC 9110 §10.1.1 lets a client send the body right away. Whether the server still
    // sends the interim 100 then is its choice, so both are accepted here.
    test_server server(routes);
    raw_client c = server.client();
    c.send(expect_head("100-continue", 4) + "body");
    response r = c.read_response();
    if (r.status == 100) r = c.read_response();
    INFO(describe(r));
    CHECK(r.status == 200);
    CHECK(r.body == "body");
}

TEST_CASE("a chunked body with Expect: 100-continue gets 100 Continue first", "[wire][expect]") {
    test_server server(routes);
    raw_client c = server.client();
    c.send(
        "PUT /echo HTTP/1.1\r\nHost: localhost\r\nExpect: 100-continue\r\n"
        "Transfer-Encoding: chunked\r\n\r\n");
    REQUIRE(c.read_response().status == 100);
    c.send("4\r\nwxyz\r\n0\r\n\r\n");
    const response r = c.read_response();
    CHECK(r.status == 200);
    CHECK(r.body == "wxyz");
}

TEST_CASE("an unknown expectation gets 417 and the connection closes", "[wire][expect]") {
    test_server server(routes);
    raw_client c = server.client();
    c.send(expect_head("something-else", 4));
    const response r = c.read_response();
    INFO(describe(r));
    CHECK(r.status == 417);
    check_common_headers(r);
    check_closed_and_still_serving(c, r, server.port());
}

TEST_CASE("Expect: 100-continue named twice gets one 100 Continue", "[wire][expect]") {
    test_server server(routes);
    raw_client c = server.client();
    c.send(
        "PUT /echo HTTP/1.1\r\nHost: localhost\r\nExpect: 100-continue\r\n"
        "Expect: 100-Continue\r\nContent-Length: 5\r\n\r\n");
    CHECK(c.read_response().status == 100);
    CHECK(c.buffered().empty());
    c.send("hello");
    const response r = c.read_response();
    CHECK(r.status == 200);
    CHECK(r.body == "hello");
}

TEST_CASE("an empty Expect asks for nothing: no 100 Continue, the body is read", "[wire][expect]") {
    test_server server(routes);
    raw_client c = server.client();
    c.send("PUT /echo HTTP/1.1\r\nHost: localhost\r\nExpect:\r\nContent-Length: 5\r\n\r\nhello");
    const response r = c.read_response();
    CHECK(r.status == 200);
    CHECK(r.body == "hello");
}

}  // namespace wire_test_expect_continue

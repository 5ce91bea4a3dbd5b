// Handler failures as the client sees them: http_error chooses the status and body, any
// other exception becomes a plain 500, and neither breaks the connection.

#include <catch2/catch.hpp>
#include <stdexcept>
#include <string>

#include "support/raw_client.hpp"
#include "support/test_server.hpp"

namespace wire_test_errors_wire {

using namespace tern_test;

namespace {

void routes(tern::app& app) {
    app.get("/ok", [](tern::context& ctx) { ctx.text("ok"); });
    app.get("/runtime", [](tern::context&) { throw std::runtime_error("secret detail"); });
    app.get("/teapot", [](tern::context&) { throw tern::http_error(418, "teapot"); });
    app.get("/not-std", [](tern::context&) { throw 42; });
    app.get("/late-throw", [](tern::context& ctx) {
        ctx.status(201).header("X-Leak", "yes").html("<p>half-built page</p>");
        throw std::runtime_error("failed after setting a body");
    });
    app.get("/late-http-error", [](tern::context& ctx) {
        ctx.html("<p>half-built page</p>");
        throw tern::http_error(403, "no entry");
    });
    app.get("/bad-status", [](tern::context&) { throw tern::http_error(200, "not an error"); });
    app.put("/echo-then-throw", [](tern::context& ctx) {
        ctx.result(std::string(ctx.body()));
        throw std::logic_error("bug");
    });
}

}  // namespace

TEST_CASE("a handler throwing std::runtime_error gets 500 Internal Server Error",
          "[wire][errors]") {
    test_server server(routes);
    raw_client c = server.client();
    c.send(get_request("/runtime"));
    const response r = c.read_response();
    INFO(describe(r));
    CHECK(r.status == 500);
    CHECK(r.body == "Internal Server Error");
    REQUIRE(r.header("Content-Type").has_value());
    CHECK(r.header("Content-Type")->rfind("text/plain", 0) == 0);
    check_common_headers(r);
}

TEST_CASE("the connection keeps working after a handler threw", "[wire][errors]") {
    test_server server(routes);
    raw_client c = server.client();
    c.send(get_request("/runtime"));
    const response failed = c.read_response();
    CHECK(failed.status == 500);
    const auto connection = failed.header("Connection");
    CHECK_FALSE((connection && has_token(*connection, "close")));

    c.send(get_request("/ok"));
    const response r = c.read_response();
    CHECK(r.status == 200);
    CHECK(r.body == "ok");
}

TEST_CASE("http_error sets the status and the body", "[wire][errors]") {
    test_server server(routes);
    raw_client c = server.client();
    c.send(get_request("/teapot"));
    const response r = c.read_response();
    INFO(describe(r));
    CHECK(r.status == 418);
    CHECK(r.body == "teapot");
    check_common_headers(r);

    // An http_error is an answer, not a broken connection.
    c.send(get_request("/ok"));
    CHECK(c.read_response().body == "ok");
}

TEST_CASE("an exception not derived from std::exception gets 500", "[wire][errors]") {
    test_server server(routes);
    raw_client c = server.client();
    c.send(get_request("/not-std") + get_request("/ok"));
    const response r = c.read_response();
    INFO(describe(r));
    CHECK(r.status == 500);
    CHECK(r.body == "Internal Server Error");
    CHECK(c.read_response().body == "ok");
}

TEST_CASE("a handler that threw after setting a body does not leak that body", "[wire][errors]") {
    test_server server(routes);
    raw_client c = server.client();
    c.send(get_request("/late-throw"));
    const response r = c.read_response();
    INFO(describe(r));
    CHECK(r.status == 500);
    CHECK(r.body == "Internal Server Error");
    REQUIRE(r.header("Content-Type").has_value());
    CHECK(r.header("Content-Type")->find("text/html") == std::string::npos);
    // Headers set before the throw belong to the abandoned response too.
    CHECK_FALSE(r.header("X-Leak").has_value());
}

TEST_CASE("http_error thrown after setting a body answers with its own message", "[wire][errors]") {
    test_server server(routes);
    raw_client c = server.client();
    c.send(get_request("/late-http-error"));
    const response r = c.read_response();
    INFO(describe(r));
    CHECK(r.status == 403);
    CHECK(r.body == "no entry");
}

TEST_CASE("http_error with a status outside 400..599 throws std::invalid_argument: a 500",
          "[wire][errors]") {
    test_server server(routes);
    raw_client c = server.client();
    c.send(get_request("/bad-status"));
    const response r = c.read_response();
    INFO(describe(r));
    CHECK(r.status == 500);
}

TEST_CASE("a request body read before the handler threw is not echoed", "[wire][errors]") {
    test_server server(routes);
    raw_client c = server.client();
    c.send(body_request("PUT", "/echo-then-throw", "private data") + get_request("/ok"));
    const response r = c.read_response();
    INFO(describe(r));
    CHECK(r.status == 500);
    CHECK(r.body == "Internal Server Error");
    CHECK(c.read_response().body == "ok");
}

TEST_CASE("many failing requests in a row leave the server serving", "[wire][errors]") {
    test_server server(routes);
    raw_client c = server.client();
    std::string batch;
    for (int i = 0; i < 20; ++i) batch += get_request(i % 2 == 0 ? "/runtime" : "/teapot");
    c.send(batch);
    for (int i = 0; i < 20; ++i) {
        const response r = c.read_response();
        INFO("response " << i << ": " << describe(r));
        CHECK(r.status == (i % 2 == 0 ? 500 : 418));
    }
    check_still_serving(server.port());
}

}  // namespace wire_test_errors_wire

// Methods tern can and cannot receive, and OPTIONS on the server as a whole.

#include "support/test_server.hpp"

#include <catch2/catch.hpp>

#include <stdexcept>

namespace wire_test_methods {

using namespace tern_test;

TEST_CASE("a route for a method the parser cannot receive is refused at registration",
          "[wire][methods]") {
    tern::app app(test_config());
    auto h = [](tern::context& ctx) { ctx.text("x"); };
    CHECK_THROWS_AS(app.add("FOO", "/", h), std::invalid_argument);
    CHECK_THROWS_AS(app.add("get", "/", h), std::invalid_argument);
    CHECK_NOTHROW(app.add("PROPFIND", "/", h));
    CHECK_NOTHROW(app.add("QUERY", "/", h));
}

TEST_CASE("a registered WebDAV method is served", "[wire][methods]") {
    test_server server([](tern::app& app) {
        app.add("PROPFIND", "/dav/<path>", [](tern::context& ctx) {
            ctx.status(207).text(std::string(ctx.path_param("path")));
        });
    });
    raw_client c = server.client();
    c.send("PROPFIND /dav/a/b HTTP/1.1\r\nHost: x\r\n\r\n");
    const response r = c.read_response();
    CHECK(r.status == 207);
    CHECK(r.body == "a/b");
}

TEST_CASE("an unknown method token gets 501 and the connection closes", "[wire][methods]") {
    test_server server;
    raw_client c = server.client();
    c.send("FOO / HTTP/1.1\r\nHost: x\r\n\r\n");
    const response r = c.read_response();
    CHECK(r.status == 501);
    check_closed_and_still_serving(c, r, server.port());
}

TEST_CASE("OPTIONS * is answered 204 and the connection stays open", "[wire][methods]") {
    test_server server;
    raw_client c = server.client();
    c.send("OPTIONS * HTTP/1.1\r\nHost: x\r\n\r\n");
    const response r = c.read_response();
    CHECK(r.status == 204);
    c.send(get_request(alive_path));
    CHECK(c.read_response().body == "alive");
}

}  // namespace wire_test_methods

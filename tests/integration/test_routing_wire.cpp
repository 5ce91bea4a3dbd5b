// Routing as a client sees it: 404 and 405 answers, path and query parameters decoded,
// trailing slashes, wildcards and custom methods.

#include <catch2/catch.hpp>
#include <string>

#include "support/raw_client.hpp"
#include "support/test_server.hpp"

namespace wire_test_routing_wire {

using namespace tern_test;

namespace {

std::string joined(const std::vector<std::string>& values) {
    std::string out;
    for (const auto& v : values) out += "[" + v + "]";
    return out;
}

}  // namespace

TEST_CASE("an unknown path gets 404 Not Found as text/plain", "[wire][routing]") {
    test_server server(
        [](tern::app& app) { app.get("/known", [](tern::context& ctx) { ctx.text("k"); }); });
    raw_client c = server.client();
    c.send(get_request("/unknown"));
    const response r = c.read_response();
    INFO(describe(r));
    CHECK(r.status == 404);
    CHECK(r.body == "Not Found");
    REQUIRE(r.header("Content-Type").has_value());
    CHECK(r.header("Content-Type")->rfind("text/plain", 0) == 0);
    check_common_headers(r);

    // A 404 is an ordinary answer: the connection stays open.
    c.send(get_request("/known"));
    CHECK(c.read_response().body == "k");
}

TEST_CASE("a method not routed on an existing path gets 405 with Allow", "[wire][routing]") {
    test_server server(
        [](tern::app& app) { app.get("/only-get", [](tern::context& ctx) { ctx.text("g"); }); });
    raw_client c = server.client();
    c.send(body_request("POST", "/only-get", "x"));
    const response r = c.read_response();
    INFO(describe(r));
    CHECK(r.status == 405);
    CHECK(r.header("Allow") == "GET, HEAD, OPTIONS");
    CHECK(r.body == "Method Not Allowed");
    check_common_headers(r);

    // The body of the refused request was consumed; the connection goes on.
    c.send(get_request("/only-get"));
    CHECK(c.read_response().body == "g");
}

TEST_CASE("a 405 Allow lists every method routed on the path", "[wire][routing]") {
    test_server server([](tern::app& app) {
        app.get("/thing", [](tern::context& ctx) { ctx.text("g"); });
        app.post("/thing", [](tern::context& ctx) { ctx.text("p"); });
    });
    const response r = fetch(server, body_request("PUT", "/thing", ""));
    INFO(describe(r));
    CHECK(r.status == 405);
    REQUIRE(r.header("Allow").has_value());
    const std::string allow = *r.header("Allow");
    for (const char* method : {"GET", "HEAD", "POST", "OPTIONS"}) {
        CHECK(has_token(allow, method));
    }
    CHECK_FALSE(has_token(allow, "PUT"));
}

TEST_CASE("a {name} path parameter reaches the handler percent-decoded", "[wire][routing]") {
    test_server server([](tern::app& app) {
        app.get("/users/{id}",
                [](tern::context& ctx) { ctx.text(std::string(ctx.path_param("id"))); });
    });
    CHECK(fetch(server, get_request("/users/42")).body == "42");
    CHECK(fetch(server, get_request("/users/J%C3%B6rg")).body == "J\xC3\xB6rg");
    CHECK(fetch(server, get_request("/users/a%20b")).body == "a b");
    // {id} is one segment only.
    CHECK(fetch(server, get_request("/users/1/2")).status == 404);
}

TEST_CASE("a <name> path parameter takes the rest of the path, percent-decoded",
          "[wire][routing]") {
    test_server server([](tern::app& app) {
        app.get("/files/<rest>",
                [](tern::context& ctx) { ctx.text(std::string(ctx.path_param("rest"))); });
    });
    CHECK(fetch(server, get_request("/files/a%20b")).body == "a b");
    CHECK(fetch(server, get_request("/files/dir/sub/file.txt")).body == "dir/sub/file.txt");
}

TEST_CASE("several path parameters are each decoded", "[wire][routing]") {
    test_server server([](tern::app& app) {
        app.get("/users/{user}/posts/{post}", [](tern::context& ctx) {
            ctx.text(std::string(ctx.path_param("user")) + "|" +
                     std::string(ctx.path_param("post")));
        });
    });
    CHECK(fetch(server, get_request("/users/a%2Bb/posts/7")).body == "a+b|7");
}

TEST_CASE("query parameters are decoded, '+' being a space, and repeat in order",
          "[wire][routing]") {
    test_server server([](tern::app& app) {
        app.get("/search", [](tern::context& ctx) {
            const auto first = ctx.query_param("q");
            const auto missing = ctx.query_param("missing");
            ctx.text((first ? *first : std::string("<none>")) + "|" +
                     joined(ctx.query_params("q")) + "|" + (missing ? "present" : "absent") + "|" +
                     std::to_string(ctx.query_params("missing").size()));
        });
    });
    const response r = fetch(server, get_request("/search?q=a+b&q=c%21"));
    INFO(describe(r));
    CHECK(r.status == 200);
    CHECK(r.body == "a b|[a b][c!]|absent|0");
}

TEST_CASE("a query string does not affect route matching", "[wire][routing]") {
    test_server server(
        [](tern::app& app) { app.get("/page", [](tern::context& ctx) { ctx.text("page"); }); });
    CHECK(fetch(server, get_request("/page?x=1")).body == "page");
    CHECK(fetch(server, get_request("/page?")).body == "page");
}

TEST_CASE("a trailing slash is ignored when matching", "[wire][routing]") {
    test_server server([](tern::app& app) {
        app.get("/users", [](tern::context& ctx) { ctx.text("users"); });
        app.get("/about/", [](tern::context& ctx) { ctx.text("about"); });
        app.get("/users/{id}",
                [](tern::context& ctx) { ctx.text(std::string(ctx.path_param("id"))); });
    });
    CHECK(fetch(server, get_request("/users")).body == "users");
    CHECK(fetch(server, get_request("/users/")).body == "users");
    CHECK(fetch(server, get_request("/about")).body == "about");
    CHECK(fetch(server, get_request("/about/")).body == "about");
    CHECK(fetch(server, get_request("/users/7/")).body == "7");
}

TEST_CASE("paths match case-sensitively", "[wire][routing]") {
    test_server server(
        [](tern::app& app) { app.get("/users", [](tern::context& ctx) { ctx.text("users"); }); });
    CHECK(fetch(server, get_request("/Users")).status == 404);
}

TEST_CASE("a * wildcard matches any run of characters", "[wire][routing]") {
    test_server server([](tern::app& app) {
        app.get("/assets/*", [](tern::context& ctx) { ctx.text(std::string(ctx.path())); });
    });
    CHECK(fetch(server, get_request("/assets/app.js")).body == "/assets/app.js");
    CHECK(fetch(server, get_request("/assets/css/site.css")).body == "/assets/css/site.css");
}

TEST_CASE("each method reaches its own handler on the same path", "[wire][routing]") {
    test_server server([](tern::app& app) {
        app.get("/r", [](tern::context& ctx) { ctx.text("get"); });
        app.post("/r", [](tern::context& ctx) { ctx.text("post"); });
        app.put("/r", [](tern::context& ctx) { ctx.text("put"); });
        app.patch("/r", [](tern::context& ctx) { ctx.text("patch"); });
        app.del("/r", [](tern::context& ctx) { ctx.text("delete"); });
        app.add("PROPFIND", "/r", [](tern::context& ctx) { ctx.text("propfind"); });
    });
    raw_client c = server.client();
    c.send(get_request("/r") + body_request("POST", "/r", "") + body_request("PUT", "/r", "") +
           body_request("PATCH", "/r", "") + body_request("DELETE", "/r", "") +
           body_request("PROPFIND", "/r", ""));
    for (const char* expected : {"get", "post", "put", "patch", "delete", "propfind"}) {
        const response r = c.read_response();
        INFO(describe(r));
        CHECK(r.status == 200);
        CHECK(r.body == expected);
    }
}

TEST_CASE("an exact route wins over a parameter route at the same place", "[wire][routing]") {
    test_server server([](tern::app& app) {
        app.get("/users/{id}", [](tern::context& ctx) { ctx.text("param"); });
        app.get("/users/me", [](tern::context& ctx) { ctx.text("exact"); });
    });
    CHECK(fetch(server, get_request("/users/me")).body == "exact");
    CHECK(fetch(server, get_request("/users/you")).body == "param");
}

}  // namespace wire_test_routing_wire

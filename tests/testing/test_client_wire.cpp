// The test kit's client against real tern servers: methods, bodies, headers, framing
// (Content-Length, chunked, HEAD, 204), keep-alive and reconnection, raw bytes.

#include "support/eventually.hpp"

#include <catch2/catch.hpp>
#include <tern/json.hpp>
#include <tern/tern.hpp>
#include <tern/testing.hpp>

#include <string>

namespace kit_test_client_wire {

namespace {

tern::config two_threads() {
    tern::config cfg;
    cfg.threads = 2;
    return cfg;
}

}  // namespace

TEST_CASE("the client sends each method with its body and reads status, reason, headers and body",
          "[testing]") {
    tern::app app(two_threads());
    app.add("GET", "/echo", [](tern::context& ctx) {
        ctx.header("X-Method", std::string(ctx.method())).text("got");
    });
    for (const char* method : {"POST", "PUT", "PATCH"}) {
        app.add(method, "/echo", [](tern::context& ctx) {
            ctx.status(201)
                .header("X-Method", std::string(ctx.method()))
                .header("X-Type", std::string(ctx.header("content-type").value_or("none")))
                .result(std::string(ctx.body()));
        });
    }
    app.del("/echo", [](tern::context& ctx) { ctx.status(204); });
    tern::testing::test(app, [](tern::testing::server&, tern::testing::client& http) {
        const auto got = http.get("/echo");
        CHECK(got.status == 200);
        CHECK(got.reason == "OK");
        CHECK(got.body == "got");
        CHECK(got.header("x-method") == "GET");
        CHECK(got.header("CONTENT-TYPE") == "text/plain; charset=utf-8");
        CHECK_FALSE(got.header("X-Absent").has_value());

        const auto posted = http.post("/echo", "a body", "text/csv");
        CHECK(posted.status == 201);
        CHECK(posted.reason == "Created");
        CHECK(posted.body == "a body");
        CHECK(posted.header("X-Type") == "text/csv");
        const auto put = http.put("/echo", "put body");
        CHECK(put.header("X-Method") == "PUT");
        CHECK(put.header("X-Type") == "text/plain");
        CHECK(put.body == "put body");
        const auto patched = http.patch("/echo", "{}", "application/json");
        CHECK(patched.header("X-Method") == "PATCH");
        CHECK(patched.header("X-Type") == "application/json");
        const auto deleted = http.del("/echo");
        CHECK(deleted.status == 204);
        CHECK(deleted.body.empty());
        CHECK(http.request("OPTIONS", "/echo").header("Allow").has_value());
        CHECK(http.get("/nowhere").status == 404);
    });
}

TEST_CASE("default headers go with every call and a call's own headers win over them",
          "[testing]") {
    tern::app app(two_threads());
    app.get("/who", [](tern::context& ctx) {
        ctx.text(std::string(ctx.header("x-user").value_or("-")) + "/" +
                 std::string(ctx.header("x-trace").value_or("-")));
    });
    tern::testing::test(app, [](tern::testing::server&, tern::testing::client& http) {
        CHECK(http.get("/who").body == "-/-");
        http.header("X-User", "ada").header("X-Trace", "1");
        CHECK(http.get("/who").body == "ada/1");
        CHECK(http.get("/who", {{"x-user", "bob"}}).body == "bob/1");
        http.header("x-user", "eve");  // replaces the default of the same name
        CHECK(http.get("/who").body == "eve/1");
    });
}

TEST_CASE(
    "a chunked response is read whole and its trailer-free framing does not leak into the next "
    "call",
    "[testing]") {
    tern::app app(two_threads());
    app.get("/chunks", [](tern::context& ctx) {
        auto out = ctx.stream();
        for (int i = 0; i < 50; ++i) out.write("piece " + std::to_string(i) + "\n");
        out.end();
    });
    app.get("/after", [](tern::context& ctx) { ctx.text("after"); });
    tern::testing::test(app, [](tern::testing::server&, tern::testing::client& http) {
        const auto r = http.get("/chunks");
        CHECK(r.status == 200);
        CHECK(r.header("Transfer-Encoding") == "chunked");
        CHECK_FALSE(r.header("Content-Length").has_value());
        std::string expected;
        for (int i = 0; i < 50; ++i) expected += "piece " + std::to_string(i) + "\n";
        CHECK(r.body == expected);
        CHECK(http.get("/after").body == "after");
    });
}

TEST_CASE("HEAD gets the GET's head and no body, and the connection goes on", "[testing]") {
    tern::app app(two_threads());
    app.get("/page", [](tern::context& ctx) { ctx.text(std::string(1000, 'x')); });
    tern::testing::test(app, [](tern::testing::server&, tern::testing::client& http) {
        const auto head = http.head("/page");
        CHECK(head.status == 200);
        CHECK(head.header("Content-Length") == "1000");
        CHECK(head.body.empty());
        // Had the client waited for 1000 body bytes, this would time out; had it taken the
        // next response as a body, this would not be the page.
        const auto get = http.get("/page");
        CHECK(get.body == std::string(1000, 'x'));
    });
}

TEST_CASE("the client opens a new connection when the server closed the last one", "[testing]") {
    tern::app app(two_threads());
    app.configure([](tern::config& c) {
        c.limits.max_requests_per_connection = 1;  // every response says Connection: close
    });
    app.get("/n", [](tern::context& ctx) { ctx.text("n"); });
    tern::testing::test(app, [](tern::testing::server& server, tern::testing::client& http) {
        const auto first = http.get("/n");
        CHECK(first.header("Connection") == "close");
        CHECK(http.get("/n").body == "n");
        CHECK(http.get("/n").body == "n");
        CHECK(server.app().stats().connections_accepted >= 3);
    });
}

TEST_CASE("raw bytes of a malformed request come back as the server's 400, and it serves on",
          "[testing]") {
    tern::app app(two_threads());
    app.get("/ok", [](tern::context& ctx) { ctx.text("ok"); });
    tern::testing::test(app, [](tern::testing::server&, tern::testing::client& http) {
        const std::string answer = http.raw("GET /ok HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n");
        INFO(answer);
        CHECK(answer.starts_with("HTTP/1.1 400 "));
        CHECK(answer.find("Connection: close") != std::string::npos);
        const std::string line = http.raw("NOT A REQUEST\r\n\r\n");
        CHECK(line.starts_with("HTTP/1.1 400 "));
        // A well-formed request through raw: its answer comes back although the server
        // keeps the connection open.
        const std::string fine = http.raw("GET /ok HTTP/1.1\r\nHost: a\r\n\r\n");
        CHECK(fine.starts_with("HTTP/1.1 200 OK\r\n"));
        CHECK(fine.ends_with("\r\n\r\nok"));
        CHECK(http.get("/ok").body == "ok");
    });
}

TEST_CASE("JSON goes out with post_json and put_json and comes back with response::json",
          "[testing]") {
    tern::app app(two_threads());
    app.post("/users", [](tern::context& ctx) {
        auto user = ctx.body_as<tern::json>();
        user["id"] = 7;
        ctx.status(201).json(user);
    });
    app.put("/users/7", [](tern::context& ctx) {
        ctx.json({{"type", std::string(ctx.header("content-type").value_or(""))},
                  {"got", ctx.body_as<tern::json>()}});
    });
    tern::testing::test(app, [](tern::testing::server&, tern::testing::client& http) {
        const auto created = http.post_json("/users", {{"name", "ada"}});
        CHECK(created.status == 201);
        CHECK(created.json() == tern::json{{"name", "ada"}, {"id", 7}});
        const tern::json update{{"name", "ada lovelace"}};
        const auto replaced = http.put_json("/users/7", update);
        CHECK(replaced.json()["type"] == "application/json");
        CHECK(replaced.json()["got"] == update);
        CHECK_THROWS_AS(http.get("/nowhere").json(), tern::json::parse_error);
    });
}

TEST_CASE("a keep-alive connection the server closed while idle is replaced before the next call",
          "[testing]") {
    tern::config cfg = two_threads();
    cfg.timeouts.keep_alive = std::chrono::milliseconds(50);
    tern::app app(cfg);
    app.get("/n", [](tern::context& ctx) { ctx.text("n"); });
    tern::testing::test(app, [](tern::testing::server& server, tern::testing::client& http) {
        CHECK(http.get("/n").header("Connection") != "close");  // kept open by the server
        // The server closes the idle connection; the client finds it closed and reconnects.
        REQUIRE(tern_test::eventually([&] { return server.app().stats().open_connections == 0; }));
        CHECK(http.get("/n").body == "n");
        CHECK(server.app().stats().connections_accepted == 2);
    });
}

}  // namespace kit_test_client_wire

// A test a user writes with tern's test kit (tern::testing), built by every packaging test
// beside consumer.cpp (tests/packaging/run.sh): a plain program, no test framework. It
// starts an app with tern::testing::test, checks a GET, a JSON POST and a cookie kept
// between calls, and that the port refuses once the test is over. Exits 0 when all hold.

#include <tern/json.hpp>
#include <tern/tern.hpp>
#include <tern/testing.hpp>

#include <cstdio>
#include <string>

namespace {

int failures = 0;

// Like assert, but kept in release builds and counted.
void expect(bool ok, const char* what) {
    if (!ok) {
        std::printf("FAILED: %s\n", what);
        ++failures;
    }
}

}  // namespace

int main() {
    tern::app app;
    app.threads(1);
    app.get("/hello", [](tern::context& ctx) { ctx.text("hello"); });
    app.post("/login", [](tern::context& ctx) {
        ctx.cookie("user", ctx.body_as<tern::json>().at("name").get<std::string>()).status(204);
    });
    app.get("/me", [](tern::context& ctx) {
        ctx.json({{"user", std::string(ctx.cookie("user").value_or("nobody"))}});
    });

    std::uint16_t port = 0;
    tern::testing::test(app, [&](tern::testing::server& server, tern::testing::client& http) {
        port = server.port();
        const auto hello = http.get("/hello");
        expect(hello.status == 200 && hello.body == "hello", "GET /hello is 200 hello");
        expect(http.post_json("/login", {{"name", "ada"}}).status == 204, "POST /login is 204");
        expect(http.get("/me").json()["user"] == "ada", "the cookie is sent back");
    });
    bool refused = false;
    try {
        tern::testing::client(port).get("/hello");
    } catch (const tern::testing::client_error&) {
        refused = true;
    }
    expect(refused, "the port refuses after the test");
    std::printf("tern::testing consumer: %s\n", failures == 0 ? "all checks passed" : "failures");
    return failures == 0 ? 0 : 1;
}

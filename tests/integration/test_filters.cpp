// before/after filters over the wire: order, patterns, ending a request early, after
// filters running after a throw, and path parameters seen by filters.

#include <catch2/catch.hpp>
#include <stdexcept>
#include <string>

#include "support/raw_client.hpp"
#include "support/test_server.hpp"

namespace wire_test_filters {

using namespace tern_test;

TEST_CASE("before filters run in order before the handler, after filters after it",
          "[wire][filters]") {
    test_server server([](tern::app& app) {
        // After filters append to the body, so its text shows the order they ran in.
        auto add_trace = [](std::string m) {
            return [m](tern::context& ctx) { ctx.result(std::string(ctx.result()) + m); };
        };
        app.get("/x", [](tern::context& ctx) { ctx.result(std::string(ctx.result()) + "H"); });
        app.after(add_trace("a1"));
        app.after("/x", add_trace("a2"));
        app.after("/y", add_trace("never"));
        app.before([](tern::context& ctx) { ctx.header("X-B1", "1"); });
        app.before("/x", [](tern::context& ctx) { ctx.header("X-B2", "2"); });
        app.before("/y", [](tern::context& ctx) { ctx.header("X-Never", "1"); });
    });
    const auto r = fetch(server, get_request("/x"));
    INFO(describe(r));
    CHECK(r.status == 200);
    CHECK(r.body == "Ha1a2");
    CHECK(r.header("X-B1") == "1");
    CHECK(r.header("X-B2") == "2");
    CHECK_FALSE(r.header("X-Never"));
}

TEST_CASE("before filters run for 404s and static files too, patterns with wildcards",
          "[wire][filters]") {
    test_server server([](tern::app& app) {
        app.get("/api/users/{id}", [](tern::context& ctx) { ctx.text("user"); });
        app.before("/api/*", [](tern::context& ctx) { ctx.header("X-Api", "yes"); });
        app.before("/api/users/{id}", [](tern::context& ctx) {
            // A filter sees the matched route's parameters.
            ctx.header("X-Id", ctx.path_param("id"));
        });
        app.before([](tern::context& ctx) { ctx.header("X-All", "yes"); });
    });
    auto r = fetch(server, get_request("/api/users/42"));
    CHECK(r.status == 200);
    CHECK(r.header("X-Api") == "yes");
    CHECK(r.header("X-Id") == "42");
    r = fetch(server, get_request("/nowhere"));
    CHECK(r.status == 404);
    CHECK(r.header("X-All") == "yes");
    CHECK_FALSE(r.header("X-Api"));
    r = fetch(server, get_request("/api/other"));
    CHECK(r.status == 404);
    CHECK(r.header("X-Api") == "yes");
    // "/api/*" needs at least one segment after /api.
    r = fetch(server, get_request("/api"));
    CHECK_FALSE(r.header("X-Api"));
}

TEST_CASE("a before filter ends the request by skip_remaining, a result, a redirect or a throw",
          "[wire][filters]") {
    test_server server([](tern::app& app) {
        app.before("/skip", [](tern::context& ctx) {
            ctx.status(401).header("WWW-Authenticate", "Bearer");
            ctx.skip_remaining();
        });
        app.before("/skip", [](tern::context& ctx) { ctx.header("X-Second", "ran"); });
        app.before("/result", [](tern::context& ctx) { ctx.status(403).text("no entry"); });
        app.before("/redirect", [](tern::context& ctx) { ctx.redirect("/login?next=%2F"); });
        app.before("/throw", [](tern::context&) { throw tern::unauthorized("token expired"); });
        for (const char* p : {"/skip", "/result", "/redirect", "/throw", "/open"}) {
            app.get(p, [](tern::context& ctx) { ctx.text("handler ran"); });
        }
        app.after([](tern::context& ctx) { ctx.header("X-After", "ran"); });
    });
    auto r = fetch(server, get_request("/skip"));
    INFO(describe(r));
    CHECK(r.status == 401);
    CHECK(r.header("WWW-Authenticate") == "Bearer");
    CHECK_FALSE(r.header("X-Second"));
    CHECK(r.body == "Unauthorized");  // no body set: tern says what the status means
    CHECK(r.header("X-After") == "ran");

    r = fetch(server, get_request("/result"));
    CHECK(r.status == 403);
    CHECK(r.body == "no entry");
    CHECK(r.header("X-After") == "ran");

    r = fetch(server, get_request("/redirect"));
    CHECK(r.status == 302);
    CHECK(r.header("Location") == "/login?next=%2F");
    CHECK(r.body.empty());

    r = fetch(server, get_request("/throw"));
    CHECK(r.status == 401);
    CHECK(r.body == "token expired");
    CHECK(r.header("X-After") == "ran");

    r = fetch(server, get_request("/open"));
    CHECK(r.status == 200);
    CHECK(r.body == "handler ran");
}

TEST_CASE("after filters run when the handler threw and see the mapped error", "[wire][filters]") {
    test_server server([](tern::app& app) {
        app.get("/boom", [](tern::context&) { throw std::runtime_error("secret detail"); });
        app.get("/gone", [](tern::context&) { throw tern::gone("moved away"); });
        app.after(
            [](tern::context& ctx) { ctx.header("X-Seen-Status", std::to_string(ctx.status())); });
    });
    auto r = fetch(server, get_request("/boom"));
    CHECK(r.status == 500);
    CHECK(r.header("X-Seen-Status") == "500");
    CHECK(r.body.find("secret") == std::string::npos);
    r = fetch(server, get_request("/gone"));
    CHECK(r.status == 410);
    CHECK(r.header("X-Seen-Status") == "410");
    CHECK(r.body == "moved away");
}

TEST_CASE("an after filter that throws is mapped and the others still run", "[wire][filters]") {
    test_server server([](tern::app& app) {
        app.get("/", [](tern::context& ctx) { ctx.text("fine"); });
        app.after("/", [](tern::context&) { throw tern::conflict("after says no"); });
        app.after("/", [](tern::context& ctx) { ctx.header("X-Later", "ran"); });
    });
    const auto r = fetch(server, get_request("/"));
    CHECK(r.status == 409);
    CHECK(r.body == "after says no");
    CHECK(r.header("X-Later") == "ran");
    check_still_serving(server.port());
}

TEST_CASE("filters cannot be added while running, bad filter patterns are refused",
          "[wire][filters]") {
    test_server server([](tern::app& app) {
        CHECK_THROWS_AS(app.before("no-slash", [](tern::context&) {}), std::invalid_argument);
        CHECK_THROWS_AS(app.after(tern::handler{}), std::invalid_argument);
    });
    CHECK_THROWS_AS(server.app().before([](tern::context&) {}), std::logic_error);
}

TEST_CASE("a filter reads its own pattern's path parameters whether or not a route matched",
          "[wire][filters]") {
    // Javalin gives a filter the parameters of its own pattern. A filter that reads them
    // must not turn a 405, an automatic OPTIONS or a 404 into a 500.
    test_server server([](tern::app& app) {
        app.get("/items/{itemId}", [](tern::context& ctx) {
            ctx.text("item " + std::string(ctx.path_param("itemId")));
        });
        app.before("/items/{id}",
                   [](tern::context& ctx) { ctx.header("X-Before-Id", ctx.path_param("id")); });
        app.after("/items/{id}",
                  [](tern::context& ctx) { ctx.header("X-After-Id", ctx.path_param("id")); });
        app.before("/shelves/{shelf}/*",
                   [](tern::context& ctx) { ctx.header("X-Shelf", ctx.path_param("shelf")); });
    });
    // The route matched: the handler sees its own name, the filters theirs.
    auto r = fetch(server, get_request("/items/5"));
    INFO(describe(r));
    CHECK(r.status == 200);
    CHECK(r.body == "item 5");
    CHECK(r.header("X-Before-Id") == "5");
    CHECK(r.header("X-After-Id") == "5");
    // The path exists for GET only: 405 + Allow, not 500.
    r = fetch(server, body_request("POST", "/items/5", "x"));
    INFO(describe(r));
    CHECK(r.status == 405);
    CHECK(r.header("Allow").has_value());
    CHECK(r.header("X-Before-Id") == "5");
    CHECK(r.header("X-After-Id") == "5");
    // The automatic OPTIONS answer: 204 + Allow.
    r = fetch(server, "OPTIONS /items/7 HTTP/1.1\r\nHost: x\r\n\r\n");
    INFO(describe(r));
    CHECK(r.status == 204);
    CHECK(r.header("Allow").has_value());
    CHECK(r.header("X-Before-Id") == "7");
    // No route at all for the path: 404, and the filter still has its parameter, decoded.
    r = fetch(server, get_request("/shelves/a%20b/c"));
    INFO(describe(r));
    CHECK(r.status == 404);
    CHECK(r.header("X-Shelf") == "a b");
}

TEST_CASE("a parameter the filter's pattern does not have is still an error in the filter",
          "[wire][filters]") {
    test_server server([](tern::app& app) {
        app.get("/items/{itemId}", [](tern::context& ctx) { ctx.text("item"); });
        app.before("/items/{id}", [](tern::context& ctx) {
            // The route's name is not the filter's: out_of_range, so a 500.
            ctx.header("X-Route-Id", ctx.path_param("itemId"));
        });
    });
    const auto r = fetch(server, get_request("/items/5"));
    INFO(describe(r));
    CHECK(r.status == 500);
}

}  // namespace wire_test_filters

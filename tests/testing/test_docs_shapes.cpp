// The Catch2 shapes of docs/testing.md, compiled and run as they are shown there.

#include <catch2/catch.hpp>
#include <tern/json.hpp>
#include <tern/tern.hpp>
#include <tern/testing.hpp>

#include <string>

namespace kit_test_docs_shapes {

namespace {

// The application's routes, in a function that its main() and its tests both call.
void add_user_routes(tern::app& app) {
    app.post("/users", [](tern::context& ctx) {
        const auto user = ctx.body_as<tern::json>();
        ctx.status(201).json({{"id", 1}, {"name", user.at("name")}});
    });
    app.post("/login", [](tern::context& ctx) {
        ctx.cookie("session", "s-" + std::string(ctx.form_param("user").value_or(""))).status(204);
    });
    app.get("/me", [](tern::context& ctx) {
        const auto session = ctx.cookie("session");
        if (!session) throw tern::unauthorized("log in first");
        ctx.text(std::string(*session));
    });
}

}  // namespace

TEST_CASE("a user posted as JSON comes back with an id", "[docs]") {
    tern::app app;
    add_user_routes(app);
    tern::testing::test(app, [](tern::testing::server&, tern::testing::client& http) {
        const auto created = http.post_json("/users", {{"name", "ada"}});
        CHECK(created.status == 201);
        CHECK(created.header("Content-Type") == "application/json");
        CHECK(created.json() == tern::json{{"id", 1}, {"name", "ada"}});
    });
}

TEST_CASE("the session cookie from /login is sent on later calls", "[docs]") {
    tern::app app;
    add_user_routes(app);
    tern::testing::server server(app);  // started here, stopped at the end of the scope
    auto http = server.make_client();

    CHECK(http.get("/me").status == 401);
    http.post("/login", "user=ada", "application/x-www-form-urlencoded");
    CHECK(http.cookie("session") == "s-ada");
    CHECK(http.get("/me").body == "s-ada");

    auto stranger = server.make_client();  // a second client has a jar of its own
    CHECK(stranger.get("/me").status == 401);
}

TEST_CASE("a request with two Host fields is refused with 400", "[docs]") {
    tern::app app;
    add_user_routes(app);
    tern::testing::test(app, [](tern::testing::server&, tern::testing::client& http) {
        const std::string answer = http.raw("GET /me HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n");
        CHECK(answer.starts_with("HTTP/1.1 400 Bad Request\r\n"));
        CHECK(http.get("/me").status == 401);  // and the server serves on
    });
}

}  // namespace kit_test_docs_shapes

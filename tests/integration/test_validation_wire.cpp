// Validation chains (ctx.query_param_as<T>(name).check(...).get(), tern::require_valid) over
// the wire: the 400s they answer, in plain text and as problem details.

#include <catch2/catch.hpp>
#include <optional>
#include <string>
#include <tern/json.hpp>

#include "support/raw_client.hpp"
#include "support/test_server.hpp"

namespace wire_test_validation_wire {

using namespace tern_test;

namespace {

struct todo {
    std::string title;
    int priority = 0;
};

void from_json(const tern::json& j, todo& t) {
    tern::json_member(j, "title", t.title);  // a 400 naming the member when it is wrong
    tern::json_member(j, "priority", t.priority);
}

bool positive(int v) { return v > 0; }
bool not_empty(const std::string& s) { return !s.empty(); }

void routes(tern::app& app) {
    // One value: get() answers the 400 itself.
    app.get("/one", [](tern::context& ctx) {
        const int n = ctx.query_param_as<int>("n").check(positive, "must be positive").get();
        ctx.text("n=" + std::to_string(n));
    });
    // Several values, one 400 listing every failure.
    app.post("/many", [](tern::context& ctx) {
        auto n = ctx.query_param_as<int>("n").check(positive, "must be positive");
        auto name = ctx.form_param_as<std::string>("name").check(not_empty, "must not be empty");
        auto age = ctx.form_param_as<int>("age")
                       .check([](int v) { return v >= 18; }, "must be at least 18")
                       .check([](int v) { return v < 150; }, "must be below 150")
                       .check([](int v) { return v % 2 == 0; }, "must be even");
        tern::require_valid(n, name, age);
        ctx.text(name.get() + " " + std::to_string(n.get()) + " " + std::to_string(age.get()));
    });
    // Defaults and nullable values.
    app.get("/page", [](tern::context& ctx) {
        auto page =
            ctx.query_param_as<int>("page").default_value(1).check(positive, "must be positive");
        auto size = ctx.query_param_as<int>("size").value_or(20);
        auto filter = ctx.query_param_as<std::string>("filter").allow_null().check(
            [](const std::string& f) { return f.size() <= 5; }, "is at most 5 characters");
        tern::require_valid(page, filter);
        const std::optional<std::string> f = filter.get();
        ctx.text(std::to_string(page.get()) + "/" + std::to_string(size) + "/" +
                 f.value_or("<none>"));
    });
    // Path, header and cookie sources.
    app.get("/items/{id}", [](tern::context& ctx) {
        auto id = ctx.path_param_as<int>("id").check(positive, "must be positive");
        auto version = ctx.header_as<int>("X-Version")
                           .check([](int v) { return v == 1 || v == 2; }, "must be 1 or 2");
        auto debug = ctx.cookie_as<bool>("debug").allow_null();
        tern::require_valid(id, version, debug);
        ctx.text("item " + std::to_string(id.get()) + " v" + std::to_string(version.get()) +
                 (debug.get().value_or(false) ? " debug" : ""));
    });
    // The JSON body, checked as a whole, beside a query parameter.
    app.post("/todos", [](tern::context& ctx) {
        auto body =
            ctx.body_validator<todo>()
                .check(
                    "title", [](const todo& t) { return !t.title.empty(); }, "must not be empty")
                .check(
                    "priority", [](const todo& t) { return t.priority <= 5; }, "must be at most 5");
        auto dry = ctx.query_param_as<bool>("dry").default_value(false);
        tern::require_valid(body, dry);
        ctx.text("created " + body.get().title + (dry.get() ? " (dry run)" : ""));
    });
    // docs/validation.md's example.
    // clang-format off
app.post("/signup", [](tern::context& ctx) {
    auto age = ctx.form_param_as<int>("age").check([](int v) { return v >= 18; }, "must be at least 18");
    auto name = ctx.form_param_as<std::string>("name")
                    .check([](const std::string& s) { return !s.empty(); }, "must not be empty");
    auto newsletter = ctx.query_param_as<bool>("newsletter").default_value(false);
    auto referrer = ctx.header_as<std::string>("X-Referrer").allow_null();
    tern::require_valid(age, name, newsletter, referrer);
    ctx.text("welcome " + name.get() + (newsletter.get() ? " (subscribed)" : ""));
});
    // clang-format on
}

std::string form_post(std::string_view target, std::string_view form, std::string_view extra = {}) {
    return body_request("POST", target, form,
                        "Content-Type: application/x-www-form-urlencoded\r\n" + std::string(extra));
}

tern::json problem_of(const response& r) {
    INFO(describe(r));
    REQUIRE(r.header("Content-Type") == "application/problem+json");
    return tern::json::parse(r.body);
}

}  // namespace

TEST_CASE("a value that passes its checks reaches the handler", "[wire][validation]") {
    test_server server(routes);
    auto r = fetch(server, get_request("/one?n=7"));
    CHECK(r.status == 200);
    CHECK(r.body == "n=7");
    r = fetch(server, form_post("/many?n=3", "name=ann&age=30"));
    INFO(describe(r));
    CHECK(r.status == 200);
    CHECK(r.body == "ann 3 30");
}

TEST_CASE("get() of a failing, unconvertible or missing value answers 400 naming the field",
          "[wire][validation]") {
    test_server server(routes);
    raw_client c = server.client();
    c.send(get_request("/one?n=-2") + get_request("/one?n=ten") + get_request("/one"));
    auto r = c.read_response();
    INFO(describe(r));
    CHECK(r.status == 400);
    CHECK(r.body == "n: must be positive");
    r = c.read_response();
    CHECK(r.status == 400);
    CHECK(r.body == "n: must be an integer in range");
    r = c.read_response();
    CHECK(r.status == 400);
    CHECK(r.body == "n: is required");
    // A 400 from validation keeps the connection.
    c.send(get_request("/one?n=1"));
    CHECK(c.read_response().body == "n=1");
}

TEST_CASE("several bad fields give one 400 that lists every field and message",
          "[wire][validation]") {
    test_server server(routes);
    SECTION("as plain text, one line per message") {
        const auto r = fetch(server, form_post("/many?n=0", "age=12"));
        INFO(describe(r));
        CHECK(r.status == 400);
        CHECK(r.header("Content-Type") == "text/plain; charset=utf-8");
        CHECK(r.body == "age: must be at least 18\nn: must be positive\nname: is required");
        check_common_headers(r);
    }
    SECTION("as problem details with an errors member for a JSON client") {
        const auto r =
            fetch(server, form_post("/many?n=x", "name=&age=200", "Accept: application/json\r\n"));
        CHECK(r.status == 400);
        const auto problem = problem_of(r);
        CHECK(problem["status"] == 400);
        CHECK(problem["title"] == "Bad Request");
        CHECK_FALSE(problem.contains("detail"));
        CHECK(problem["errors"] == tern::json::parse(R"({"n":["must be an integer in range"],
            "name":["must not be empty"],"age":["must be below 150"]})"));
    }
    SECTION("every failing check of one field is listed") {
        const auto r = fetch(server, form_post("/many?n=1", "name=a&age=-1&age=7",
                                               "Accept: application/problem+json\r\n"));
        CHECK(r.status == 400);
        CHECK(problem_of(r)["errors"] ==
              tern::json::parse(R"({"age":["must be at least 18","must be even"]})"));
    }
    check_still_serving(server.port());
}

TEST_CASE("docs/validation.md's signup example answers as the page shows", "[wire][validation]") {
    test_server server(routes);
    auto r = fetch(server, form_post("/signup?newsletter=maybe", "age=12"));
    INFO(describe(r));
    CHECK(r.status == 400);
    CHECK(r.body ==
          "age: must be at least 18\nname: is required\nnewsletter: must be true or false");
    r = fetch(server,
              form_post("/signup?newsletter=maybe", "age=12", "Accept: application/json\r\n"));
    CHECK(r.body ==
          R"({"errors":{"age":["must be at least 18"],"name":["is required"],)"
          R"("newsletter":["must be true or false"]},"status":400,"title":"Bad Request"})");
    r = fetch(server, form_post("/signup?newsletter=true", "age=30&name=bo"));
    CHECK(r.status == 200);
    CHECK(r.body == "welcome bo (subscribed)");
}

TEST_CASE("a missing value takes its default, a nullable one is std::nullopt",
          "[wire][validation]") {
    test_server server(routes);
    auto r = fetch(server, get_request("/page"));
    INFO(describe(r));
    CHECK(r.status == 200);
    CHECK(r.body == "1/20/<none>");
    r = fetch(server, get_request("/page?page=3&size=50&filter=abc"));
    CHECK(r.body == "3/50/abc");
    // A present nullable value is still checked, and a default does not hide a bad value.
    r = fetch(server, get_request("/page?page=zero&filter=toolong"));
    CHECK(r.status == 400);
    CHECK(r.body == "filter: is at most 5 characters\npage: must be an integer in range");
    // value_or: a present value that does not convert is still an error.
    r = fetch(server, get_request("/page?size=big"));
    CHECK(r.status == 400);
    CHECK(r.body == "size: must be an integer in range");
}

TEST_CASE("path parameters, headers and cookies are validated like query parameters",
          "[wire][validation]") {
    test_server server(routes);
    auto r = fetch(server, get_request("/items/4", "X-Version: 2\r\nCookie: debug=true\r\n"));
    INFO(describe(r));
    CHECK(r.status == 200);
    CHECK(r.body == "item 4 v2 debug");
    r = fetch(server, get_request("/items/4", "X-Version: 1\r\n"));
    CHECK(r.body == "item 4 v1");
    r = fetch(server, get_request("/items/0", "X-Version: 3\r\nCookie: debug=maybe\r\n"));
    CHECK(r.status == 400);
    CHECK(r.body ==
          "X-Version: must be 1 or 2\ndebug: must be true or false\nid: must be positive");
    r = fetch(server, get_request("/items/x"));
    CHECK(r.status == 400);
    CHECK(r.body == "X-Version: is required\nid: must be an integer in range");
}

TEST_CASE("a JSON body is checked field by field, and a malformed one is a field error",
          "[wire][validation]") {
    test_server server(routes);
    const std::string json = "Content-Type: application/json\r\n";
    auto r = fetch(server,
                   body_request("POST", "/todos?dry=1", R"({"title":"milk","priority":2})", json));
    INFO(describe(r));
    CHECK(r.status == 200);
    CHECK(r.body == "created milk (dry run)");
    r = fetch(server, body_request("POST", "/todos", R"({"title":"","priority":9})",
                                   json + "Accept: application/json\r\n"));
    CHECK(r.status == 400);
    CHECK(problem_of(r)["errors"] ==
          tern::json::parse(R"({"title":["must not be empty"],"priority":["must be at most 5"]})"));
    r = fetch(server, body_request("POST", "/todos?dry=2", "{\"title\":", json));
    CHECK(r.status == 400);
    CHECK(r.body.rfind("body: malformed JSON in the request body", 0) == 0);
    CHECK(r.body.find("\ndry: must be true or false") != std::string::npos);
    r = fetch(server, body_request("POST", "/todos", "", json));
    CHECK(r.status == 400);
    CHECK(r.body == "body: is required");
    // tern::json_member names the member that does not fit.
    r = fetch(server, body_request("POST", "/todos", R"({"title":5,"priority":1})", json));
    CHECK(r.status == 400);
    CHECK(r.body ==
          "body: the JSON request body does not fit: 'title' must be string, but is number");
    r = fetch(server, body_request("POST", "/todos", R"({"title":"x"})", json));
    CHECK(r.body == "body: the JSON request body does not fit: 'priority' is missing");
    r = fetch(server, body_request("POST", "/todos", "[1]", json));
    CHECK(r.body == "body: the JSON request body does not fit: not an object");
}

TEST_CASE("body_as answers 400 naming a member that tern::json_member reads", "[wire][json]") {
    test_server server([](tern::app& app) {
        app.post("/", [](tern::context& ctx) { ctx.text(ctx.body_as<todo>().title); });
    });
    auto r = fetch(server, body_request("POST", "/", R"({"title":"a","priority":"high"})"));
    INFO(describe(r));
    CHECK(r.status == 400);
    CHECK(r.body == "the JSON request body does not fit: 'priority' must be number, but is string");
    r = fetch(server, body_request("POST", "/", R"({"title":"a","priority":2})"));
    CHECK(r.body == "a");
}

TEST_CASE("an error(400) handler and an exception mapper see a validation_error's fields",
          "[wire][validation]") {
    SECTION("a mapper reshapes the answer") {
        test_server server([](tern::app& app) {
            routes(app);
            app.exception<tern::validation_error>(
                [](tern::validation_error& e, tern::context& ctx) {
                    std::string out;
                    for (const auto& [field, messages] : e.errors()) {
                        out += field + "=" + std::to_string(messages.size()) + ";";
                    }
                    ctx.status(422).text(out);
                });
        });
        const auto r = fetch(server, form_post("/many?n=0", "age=2"));
        INFO(describe(r));
        CHECK(r.status == 422);
        CHECK(r.body == "age=1;n=1;name=1;");
    }
    SECTION("an error handler sees the cause and the message") {
        test_server server([](tern::app& app) {
            routes(app);
            app.error(400, [](tern::context& ctx) {
                if (ctx.error_cause() == tern::error_cause::thrown) {
                    ctx.text("invalid:\n" + std::string(ctx.error_message()));
                }
            });
        });
        const auto r = fetch(server, get_request("/one?n=0"));
        CHECK(r.status == 400);
        CHECK(r.body == "invalid:\nn: must be positive");
    }
}

}  // namespace wire_test_validation_wire

// Route groups, JSON in and out, typed parameters, redirects and the request logger, over
// the wire.

#include <tern/json.hpp>

#include <catch2/catch.hpp>
#include <mutex>
#include <string>
#include <vector>

#include "support/raw_client.hpp"
#include "support/test_server.hpp"

namespace wire_test_groups_json_params {

using namespace tern_test;

namespace {

struct todo {
    int id = 0;
    std::string title;
    bool done = false;
};

void to_json(tern::json& j, const todo& t) {
    j = {{"id", t.id}, {"title", t.title}, {"done", t.done}};
}

void from_json(const tern::json& j, todo& t) {
    j.at("id").get_to(t.id);
    j.at("title").get_to(t.title);
    t.done = j.value("done", false);
}

}  // namespace

TEST_CASE("groups prefix routes, nest, and scope their filters", "[wire][groups]") {
    test_server server([](tern::app& app) {
        app.get("/", [](tern::context& ctx) { ctx.text("root"); });
        app.group("/api", [](tern::group& api) {
            api.before([](tern::context& ctx) { ctx.header("X-Api", "1"); });
            api.get("/", [](tern::context& ctx) { ctx.text("api index"); });
            api.get("/users/{id}", [](tern::context& ctx) {
                ctx.text("user " + std::string(ctx.path_param("id")));
            });
            api.subgroup("/v2", [](tern::group& v2) {
                v2.after([](tern::context& ctx) { ctx.header("X-V2", "1"); });
                v2.post("/items", [](tern::context& ctx) { ctx.status(201).text("created"); });
            });
        });
        app.group("/x", [](tern::group& x) {
            x.subgroup("/y", [](tern::group& y) { CHECK(y.prefix() == "/x/y"); });
        });
        CHECK_THROWS_AS(app.group("api", [](tern::group&) {}), std::invalid_argument);
        CHECK_THROWS_AS(app.group("/api/", [](tern::group&) {}), std::invalid_argument);
    });
    auto r = fetch(server, get_request("/api"));
    CHECK(r.body == "api index");
    CHECK(r.header("X-Api") == "1");
    r = fetch(server, get_request("/api/users/9"));
    CHECK(r.body == "user 9");
    CHECK(r.header("X-Api") == "1");
    r = fetch(server, body_request("POST", "/api/v2/items", "{}"));
    CHECK(r.status == 201);
    CHECK(r.header("X-Api") == "1");
    CHECK(r.header("X-V2") == "1");
    r = fetch(server, get_request("/"));
    CHECK(r.body == "root");
    CHECK_FALSE(r.header("X-Api"));
    // A path that merely starts with the prefix text is not in the group.
    r = fetch(server, get_request("/apix"));
    CHECK(r.status == 404);
    CHECK_FALSE(r.header("X-Api"));
}

TEST_CASE("ctx.json serializes values, literals and user types", "[wire][json]") {
    test_server server([](tern::app& app) {
        app.get("/literal", [](tern::context& ctx) {
            ctx.json({{"id", ctx.query_param("id").value_or("none")}, {"n", 1}});
        });
        app.get("/todo", [](tern::context& ctx) { ctx.json(todo{3, "write \"docs\"", true}); });
        app.get("/list", [](tern::context& ctx) { ctx.json(std::vector<int>{1, 2, 3}); });
    });
    auto r = fetch(server, get_request("/literal?id=a%20b"));
    CHECK(r.status == 200);
    CHECK(r.header("Content-Type") == "application/json");
    CHECK(r.body == R"({"id":"a b","n":1})");
    r = fetch(server, get_request("/todo"));
    CHECK(r.body == R"({"done":true,"id":3,"title":"write \"docs\""})");
    r = fetch(server, get_request("/list"));
    CHECK(r.body == "[1,2,3]");
}

TEST_CASE("body_as<T> parses JSON, malformed or mismatched JSON is a 400 saying why",
          "[wire][json]") {
    test_server server([](tern::app& app) {
        app.post("/todos", [](tern::context& ctx) {
            const auto t = ctx.body_as<todo>();
            ctx.status(201).json(t);
        });
        app.post("/raw", [](tern::context& ctx) {
            const auto doc = ctx.body_as<tern::json>();
            ctx.text(std::to_string(doc.size()));
        });
    });
    auto r = fetch(server, body_request("POST", "/todos", R"({"id":1,"title":"a"})"));
    CHECK(r.status == 201);
    CHECK(r.body == R"({"done":false,"id":1,"title":"a"})");
    r = fetch(server, body_request("POST", "/todos", R"({"id":1,"title":)"));
    CHECK(r.status == 400);
    CHECK(r.body.rfind("malformed JSON in the request body: ", 0) == 0);
    r = fetch(server, body_request("POST", "/todos", R"({"id":"one","title":"a"})"));
    CHECK(r.status == 400);
    CHECK(r.body.rfind("the JSON request body does not fit: ", 0) == 0);
    r = fetch(server, body_request("POST", "/todos", R"({"title":"a"})"));
    CHECK(r.status == 400);
    CHECK(r.body.find("id") != std::string::npos);
    r = fetch(server, body_request("POST", "/todos", ""));
    CHECK(r.status == 400);
    r = fetch(server, body_request("POST", "/raw", R"([1,2,3,4])"));
    CHECK(r.body == "4");
    // With Accept: application/json the 400 is a JSON document too.
    r = fetch(server, body_request("POST", "/todos", "nope", "Accept: application/json\r\n"));
    CHECK(r.status == 400);
    CHECK(tern::json::parse(r.body).at("status") == 400);
    check_still_serving(server.port());
}

TEST_CASE("typed query, path and form parameters convert or answer 400", "[wire][params]") {
    test_server server([](tern::app& app) {
        app.get("/page", [](tern::context& ctx) {
            const int n = ctx.query_param<int>("n", 10);
            const double f = ctx.query_param<double>("f", 0.5);
            const bool on = ctx.query_param("on", false);
            const std::string name = ctx.query_param("name", "anon");
            ctx.text(std::to_string(n) + " " + std::to_string(f) + " " + (on ? "on" : "off") + " " +
                     name);
        });
        app.get("/items/{id}", [](tern::context& ctx) {
            ctx.text(std::to_string(ctx.path_param<unsigned>("id") + 1));
        });
        app.post("/form", [](tern::context& ctx) {
            ctx.text(std::to_string(ctx.form_param<long>("qty", -1)) + " " +
                     ctx.form_param("note", "-") + " " +
                     std::to_string(ctx.form_params("tag").size()));
        });
    });
    auto r = fetch(server, get_request("/page"));
    CHECK(r.body == "10 0.500000 off anon");
    r = fetch(server, get_request("/page?n=-3&f=2.25&on=true&name=a+b"));
    CHECK(r.body == "-3 2.250000 on a b");
    r = fetch(server, get_request("/page?n=ten"));
    CHECK(r.status == 400);
    CHECK(r.body == "query parameter 'n' must be an integer in range, not 'ten'");
    r = fetch(server, get_request("/page?n=99999999999"));
    CHECK(r.status == 400);
    r = fetch(server, get_request("/page?n=3x"));
    CHECK(r.status == 400);
    r = fetch(server, get_request("/page?on=yes"));
    CHECK(r.status == 400);
    CHECK(r.body == "query parameter 'on' must be true or false, not 'yes'");
    r = fetch(server, get_request("/items/41"));
    CHECK(r.body == "42");
    r = fetch(server, get_request("/items/-1"));
    CHECK(r.status == 400);
    r = fetch(server, body_request("POST", "/form", "qty=7&note=hello+world&tag=a&tag=b",
                                   "Content-Type: application/x-www-form-urlencoded\r\n"));
    CHECK(r.body == "7 hello world 2");
    r = fetch(server,
              body_request("POST", "/form", "qty=many",
                           "Content-Type: application/x-www-form-urlencoded; charset=UTF-8\r\n"));
    CHECK(r.status == 400);
    CHECK(r.body == "form field 'qty' must be an integer in range, not 'many'");
    // A body that is not a form has no form fields.
    r = fetch(server, body_request("POST", "/form", "qty=7", "Content-Type: text/plain\r\n"));
    CHECK(r.body == "-1 - 0");
    // The 400 quotes a bounded piece of what the client sent.
    r = fetch(server, get_request("/page?n=" + std::string(500, '9')));
    CHECK(r.status == 400);
    CHECK(r.body.size() < 200);
}

TEST_CASE("redirect sets the status and Location and refuses bad input", "[wire][redirect]") {
    test_server server([](tern::app& app) {
        app.get("/old", [](tern::context& ctx) { ctx.text("ignored").redirect("/new"); });
        app.post("/form", [](tern::context& ctx) { ctx.redirect("/done", 303); });
        app.get("/bad-status", [](tern::context& ctx) { ctx.redirect("/x", 200); });
        app.get("/bad-location", [](tern::context& ctx) { ctx.redirect("/x\r\nSet-Cookie: a=b"); });
    });
    auto r = fetch(server, get_request("/old"));
    CHECK(r.status == 302);
    CHECK(r.header("Location") == "/new");
    CHECK(r.body.empty());
    r = fetch(server, body_request("POST", "/form", ""));
    CHECK(r.status == 303);
    CHECK(r.header("Location") == "/done");
    r = fetch(server, get_request("/bad-status"));
    CHECK(r.status == 500);
    r = fetch(server, get_request("/bad-location"));
    CHECK(r.status == 500);
    CHECK_FALSE(r.header("Set-Cookie"));
}

TEST_CASE("the request logger sees every final response, failures included", "[wire][logging]") {
    std::mutex m;
    std::vector<std::string> lines;
    test_server server([&](tern::app& app) {
        app.get("/hello", [](tern::context& ctx) { ctx.text("hi"); });
        app.max_body_size(4);
        app.post("/p", [](tern::context& ctx) { ctx.text("ok"); });
        app.request_logger(tern::access_log([&](std::string_view line) {
            std::lock_guard lock(m);
            lines.emplace_back(line);
        }));
    });
    fetch(server, get_request("/hello?x=1", "User-Agent: tester \"quoted\"\r\nReferer: /from\r\n"));
    fetch(server, get_request("/missing"));
    expect_rejected(server, body_request("POST", "/p", "far too long"), 413);
    std::lock_guard lock(m);
    // expect_rejected's alive check is logged too.
    REQUIRE(lines.size() >= 3);
    INFO(lines[0]);
    CHECK(lines[0].rfind("127.0.0.1 - - [", 0) == 0);
    CHECK(
        lines[0].find("] \"GET /hello?x=1 HTTP/1.1\" 200 2 \"/from\" \"tester \\\"quoted\\\"\" ") !=
        std::string::npos);
    CHECK(lines[0].find("ms") == lines[0].size() - 2);
    CHECK(lines[1].find("\"GET /missing HTTP/1.1\" 404 9 ") != std::string::npos);
    CHECK(lines[2].find("\"POST /p HTTP/1.1\" 413 ") != std::string::npos);
}

TEST_CASE("a request logger that throws does not disturb the response", "[wire][logging]") {
    test_server server([](tern::app& app) {
        app.get("/", [](tern::context& ctx) { ctx.text("fine"); });
        app.request_logger([](const tern::context&, std::chrono::nanoseconds) {
            throw std::runtime_error("logger broke");
        });
    });
    const auto r = fetch(server, get_request("/"));
    CHECK(r.status == 200);
    CHECK(r.body == "fine");
}

}  // namespace wire_test_groups_json_params

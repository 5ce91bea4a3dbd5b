// The rest_api example's API (examples/rest_api/todo_api.cpp), tested with the public test
// kit as an application's own tests would be: login and the session cookie, the to-do
// routes, JSON errors, uploads, compression, CORS and logout. The built program on a port
// (argument parsing, the access log, SIGTERM) is tests/examples/rest_api_smoke.sh's.

#include "support/decoders.hpp"
#include "todo_api.hpp"

#include <catch2/catch.hpp>
#include <tern/json.hpp>
#include <tern/testing.hpp>

#include <string>
#include <vector>

namespace {

using tern::json;
using tern::testing::client;
using tern::testing::response;
using tern::testing::server;

// Runs `fn` against a fresh rest_api (an empty store) on a free port.
void with_api(const std::function<void(server&, client&)>& fn) {
    rest_api::todo_store store;
    tern::app app;
    app.threads(2);
    rest_api::add_routes(app, store);
    tern::testing::test(app, fn);
}

response log_in(client& http) {
    return http.post("/login", "user=demo&password=demo", "application/x-www-form-urlencoded");
}

// A multipart/form-data body with one file field.
std::string multipart(std::string_view boundary, std::string_view field, std::string_view name,
                      std::string_view type, std::string_view content) {
    std::string body;
    body.append("--").append(boundary).append("\r\n");
    body.append("Content-Disposition: form-data; name=\"").append(field);
    body.append("\"; filename=\"").append(name).append("\"\r\n");
    body.append("Content-Type: ").append(type).append("\r\n\r\n");
    body.append(content).append("\r\n--").append(boundary).append("--\r\n");
    return body;
}

}  // namespace

TEST_CASE("rest_api: / redirects to the API, which needs a session first", "[rest_api]") {
    with_api([](server&, client& http) {
        const auto root = http.get("/");
        CHECK(root.status == 302);
        CHECK(root.header("Location") == "/api/todos");
        CHECK(http.get("/api/todos").status == 401);
        const auto as_json = http.get("/api/todos", {{"Accept", "application/json"}});
        CHECK(as_json.status == 401);
        CHECK(as_json.json()["detail"] == "log in first: POST /login");
        const auto wrong =
            http.post("/login", "user=demo&password=x", "application/x-www-form-urlencoded");
        CHECK(wrong.status == 401);
        CHECK_FALSE(http.cookie("session").has_value());
    });
}

TEST_CASE("rest_api: the login sets an HttpOnly session cookie that later calls carry",
          "[rest_api]") {
    with_api([](server&, client& http) {
        const auto login = log_in(http);
        CHECK(login.status == 200);
        CHECK(login.json() == json{{"user", "demo"}});
        const auto set_cookie = login.header("Set-Cookie");
        REQUIRE(set_cookie.has_value());
        CHECK(set_cookie->find("HttpOnly") != std::string_view::npos);
        CHECK(http.cookie("session") == "demo-session-token");
        CHECK(http.get("/api/todos").json() == json::array());

        CHECK(http.post("/logout", "").status == 204);
        CHECK_FALSE(http.cookie("session").has_value());
        CHECK(http.get("/api/todos").status == 401);
    });
}

TEST_CASE("rest_api: a bearer token works in place of the cookie", "[rest_api]") {
    with_api([](server& s, client& http) {
        log_in(http);
        http.post_json("/api/todos", {{"title", "one"}});
        auto other = s.make_client();
        CHECK(other.get("/api/todos/1").status == 401);
        other.header("Authorization", "Bearer demo-session-token");
        CHECK(other.get("/api/todos/1").json()["title"] == "one");
    });
}

TEST_CASE("rest_api: to-dos are created, listed in pages, replaced and deleted", "[rest_api]") {
    with_api([](server&, client& http) {
        log_in(http);
        const auto first = http.post_json("/api/todos", {{"title", "write docs"}});
        CHECK(first.status == 201);
        CHECK(first.json() == json{{"id", 1}, {"title", "write docs"}, {"done", false}});
        const auto second = http.post_json("/api/todos", {{"title", "test"}, {"done", true}});
        CHECK(second.status == 201);
        CHECK(second.header("Location") == "/api/todos/2");

        CHECK(http.get("/api/todos").json() ==
              json::parse(R"([{"id":1,"title":"write docs","done":false},
                              {"id":2,"title":"test","done":true}])"));
        CHECK(http.get("/api/todos?limit=1&offset=1").json() ==
              json::parse(R"([{"id":2,"title":"test","done":true}])"));
        const auto bad_limit = http.get("/api/todos?limit=ten");
        CHECK(bad_limit.status == 400);
        CHECK(bad_limit.body ==
              "query parameter 'limit' must be a non-negative integer in range, not 'ten'");
        CHECK(http.get("/api/todos?limit=101").status == 400);

        const auto replaced =
            http.put_json("/api/todos/1", {{"title", "write better docs"}, {"done", true}});
        CHECK(replaced.json() == json{{"id", 1}, {"title", "write better docs"}, {"done", true}});

        CHECK(http.del("/api/todos/2").status == 204);
        const auto gone = http.get("/api/todos/2");
        CHECK(gone.status == 404);
        CHECK(gone.json() == json{{"error", "no to-do with id 2"}});
        CHECK(http.del("/api/todos/2").status == 404);
    });
}

TEST_CASE("rest_api: bad JSON is 400, an empty title 422, unknown ids and routes a JSON 404",
          "[rest_api]") {
    with_api([](server&, client& http) {
        log_in(http);
        CHECK(http.post("/api/todos", R"({"title":)", "application/json").status == 400);
        CHECK(http.post_json("/api/todos", {{"title", 5}}).status == 400);
        CHECK(http.post_json("/api/todos", json::object()).status == 400);
        CHECK(http.post_json("/api/todos", {{"title", ""}}).status == 422);
        CHECK(http.put_json("/api/todos/99", {{"title", "x"}}).status == 404);
        CHECK(http.get("/api/todos/99").json() == json{{"error", "no to-do with id 99"}});
        const auto nowhere = http.get("/nowhere");
        CHECK(nowhere.status == 404);
        CHECK(nowhere.json() == json{{"error", "no route for /nowhere"}});
        CHECK(nowhere.header("X-Content-Type-Options") == "nosniff");
        CHECK(http.get("/api/todos").header("X-Content-Type-Options") == "nosniff");
    });
}

TEST_CASE("rest_api: a file uploads as multipart form data, and one over the limit gets 413",
          "[rest_api]") {
    with_api([](server&, client& http) {
        log_in(http);
        http.post_json("/api/todos", {{"title", "with a file"}});
        const std::string type = "multipart/form-data; boundary=XyZ";
        const auto uploaded = http.post(
            "/api/todos/1/attachments",
            multipart("XyZ", "file", "notes.txt", "text/plain", "line 1\r\nline 2\r\n"), type);
        CHECK(uploaded.status == 201);
        CHECK(uploaded.json() == json{{"todo", 1},
                                      {"filename", "notes.txt"},
                                      {"content_type", "text/plain"},
                                      {"size", 16}});
        const auto wrong_field =
            http.post("/api/todos/1/attachments",
                      multipart("XyZ", "other", "a.txt", "text/plain", "a"), type);
        CHECK(wrong_field.status == 400);
        const auto too_big =
            http.post("/api/todos/1/attachments",
                      multipart("XyZ", "file", "big.bin", "application/octet-stream",
                                std::string(1100000, '\0')),
                      type);
        CHECK(too_big.status == 413);
        CHECK(http.post("/api/todos/9/attachments",
                        multipart("XyZ", "file", "a.txt", "text/plain", "a"), type)
                  .status == 404);
    });
}

TEST_CASE("rest_api: a large list is gzip-compressed for a client that accepts it", "[rest_api]") {
    with_api([](server&, client& http) {
        log_in(http);
        for (int i = 1; i <= 40; ++i) {
            http.post_json("/api/todos", {{"title", "to-do number " + std::to_string(i)}});
        }
        const auto plain = http.get("/api/todos?limit=100");
        CHECK_FALSE(plain.header("Content-Encoding").has_value());
        REQUIRE(plain.json().size() == 40);
        const auto gzipped = http.get("/api/todos?limit=100", {{"Accept-Encoding", "gzip"}});
        CHECK(gzipped.header("Content-Encoding") == "gzip");
        const auto inflated = tern_test::decode_gzip(gzipped.body);
        REQUIRE(inflated.has_value());
        CHECK(*inflated == plain.body);
    });
}

TEST_CASE("rest_api: CORS answers the allowed origin's preflight and refuses others",
          "[rest_api]") {
    with_api([](server&, client& http) {
        const auto preflight = http.request(
            "OPTIONS", "/api/todos/1", {},
            {{"Origin", "http://localhost:3000"}, {"Access-Control-Request-Method", "PUT"}});
        CHECK(preflight.status == 204);
        CHECK(preflight.header("Access-Control-Allow-Origin") == "http://localhost:3000");
        CHECK(preflight.header("Access-Control-Allow-Credentials") == "true");
        const auto error = http.get("/api/todos", {{"Origin", "http://localhost:3000"}});
        CHECK(error.status == 401);
        CHECK(error.header("Access-Control-Allow-Origin") == "http://localhost:3000");
        const auto evil = http.request(
            "OPTIONS", "/api/todos/1", {},
            {{"Origin", "http://evil.example"}, {"Access-Control-Request-Method", "PUT"}});
        CHECK(evil.status == 403);
    });
}

TEST_CASE("rest_api: /openapi.json describes every route and the shapes the API really sends",
          "[rest_api][openapi]") {
    with_api([](server&, client& http) {
        const auto r = http.get("/openapi.json");  // no login: it is not under /api
        REQUIRE(r.status == 200);
        const json doc = r.json();
        CHECK(doc["openapi"] == "3.1.0");
        std::vector<std::string> paths;
        for (const auto& [path, item] : doc["paths"].items()) paths.push_back(path);
        CHECK(paths == std::vector<std::string>{"/", "/api/todos", "/api/todos/{id}",
                                                "/api/todos/{id}/attachments", "/login",
                                                "/logout"});
        const json& one = doc["paths"]["/api/todos/{id}"];
        CHECK(one.contains("get"));
        CHECK(one.contains("put"));
        CHECK(one.contains("delete"));
        CHECK(one["get"]["parameters"][0] ==
              json{{"name", "id"},
                   {"in", "path"},
                   {"required", true},
                   {"description", "The to-do's id"},
                   {"schema", {{"type", "integer"}, {"format", "int32"}}}});
        CHECK(one["get"]["security"].size() == 2);
        CHECK_FALSE(doc["paths"]["/login"]["post"].contains("security"));
        // The one route without a description still appears.
        CHECK(doc["paths"]["/"]["get"]["responses"].contains("default"));

        // What the document says a to-do is, an added one has: every required member.
        log_in(http);
        const auto created = http.post_json("/api/todos", {{"title", "described"}});
        REQUIRE(created.status == 201);
        const json schema = doc["components"]["schemas"]["Todo"];
        for (const auto& member : schema["required"]) CHECK(created.json().contains(member));
        CHECK(doc["paths"]["/api/todos"]["post"]["responses"].contains("201"));
        // And a 422 it documents is one the API answers.
        CHECK(doc["paths"]["/api/todos"]["post"]["responses"].contains("422"));
        CHECK(http.post_json("/api/todos", {{"title", ""}}).status == 422);
    });
}

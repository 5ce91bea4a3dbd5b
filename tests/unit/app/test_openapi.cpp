// The OpenAPI document built from a route table without sockets: which routes appear, how
// patterns become path templates, what a route's description adds, and the checks made
// when a described route is added.

#include <catch2/catch.hpp>
#include <tern/openapi.hpp>

#include <cstdint>
#include <stdexcept>
#include <string>

#include "app/openapi_document.hpp"
#include "routing/router.hpp"

namespace unit_test_app_openapi {

using tern::api_doc;
using tern::json;
using tern::detail::check_doc_against_pattern;
using tern::detail::openapi_document;
using tern::detail::openapi_path;
using tern::detail::route_docs;
using tern::detail::router;

namespace {

void nothing(tern::context&) {}

// The route table and what its routes said, as app.cpp keeps them.
struct table {
    router routes;
    route_docs docs;

    table& add(const std::string& method, const std::string& pattern,
               const api_doc* doc = nullptr) {
        routes.add(method, pattern, nothing);
        if (doc != nullptr) docs[{method, pattern}] = std::make_shared<const api_doc>(*doc);
        return *this;
    }
    json document(const tern::openapi_info& info = {}) const {
        return openapi_document(routes, docs, info);
    }
};

}  // namespace

TEST_CASE("patterns become OpenAPI path templates", "[openapi]") {
    CHECK(openapi_path("/") == "/");
    CHECK(openapi_path("/users") == "/users");
    CHECK(openapi_path("/users/") == "/users");
    CHECK(openapi_path("/users/{id}/posts/{post}") == "/users/{id}/posts/{post}");
    CHECK(openapi_path("/files/<path>") == "/files/{path}");
    CHECK(openapi_path("/a/*/b/*") == "/a/{wildcard}/b/{wildcard2}");
    CHECK_THROWS_AS(openapi_path("users"), std::invalid_argument);
}

TEST_CASE("a route without a description appears with its path parameters as strings",
          "[openapi]") {
    table t;
    t.add("GET", "/users/{id}").add("DELETE", "/users/{id}").add("GET", "/files/<path>");
    const json doc = t.document();
    CHECK(doc["openapi"] == "3.1.0");
    CHECK(doc["info"] == json{{"title", "API"}, {"version", "1.0.0"}});
    const json& get = doc["paths"]["/users/{id}"]["get"];
    REQUIRE(get["parameters"].size() == 1);
    CHECK(
        get["parameters"][0] ==
        json{{"name", "id"}, {"in", "path"}, {"required", true}, {"schema", {{"type", "string"}}}});
    CHECK(get["responses"] == json{{"default", {{"description", "Not described."}}}});
    CHECK(doc["paths"]["/users/{id}"].contains("delete"));
    // HEAD and OPTIONS that tern answers on its own are not routes: not listed.
    CHECK_FALSE(doc["paths"]["/users/{id}"].contains("head"));
    CHECK_FALSE(doc["paths"]["/users/{id}"].contains("options"));
    const json& tail = doc["paths"]["/files/{path}"]["get"]["parameters"][0];
    CHECK(tail["name"] == "path");
    CHECK(tail["description"] == "The rest of the path, slashes included.");
}

TEST_CASE("only the methods OpenAPI has a field for are listed", "[openapi]") {
    table t;
    for (const char* m : {"GET", "PUT", "POST", "DELETE", "OPTIONS", "HEAD", "PATCH", "TRACE"}) {
        t.add(m, "/x");
    }
    t.add("PROPFIND", "/x").add("PROPFIND", "/dav");
    const json doc = t.document();
    CHECK(doc["paths"]["/x"].size() == 8);
    for (const char* f : {"get", "put", "post", "delete", "options", "head", "patch", "trace"}) {
        CHECK(doc["paths"]["/x"].contains(f));
    }
    CHECK_FALSE(doc["paths"].contains("/dav"));
}

TEST_CASE("a description's fields, typed parameters, bodies and responses are kept", "[openapi]") {
    const api_doc described = api_doc()
                                  .summary("One to-do")
                                  .description("Finds it by **id**.")
                                  .operation_id("getTodo")
                                  .tag("todos")
                                  .query_param<bool>("full", "with history")
                                  .path_param<std::int64_t>("id", "its id")
                                  .header_param<std::string>("X-Trace", {}, true)
                                  .response(200, "the to-do", json{{"type", "object"}})
                                  .response(404, "no such to-do");
    table t;
    t.add("GET", "/todos/{list}/{id}", &described);
    const json op = t.document()["paths"]["/todos/{list}/{id}"]["get"];
    CHECK(op["summary"] == "One to-do");
    CHECK(op["description"] == "Finds it by **id**.");
    CHECK(op["operationId"] == "getTodo");
    CHECK(op["tags"] == json{"todos"});
    // The undeclared {list} first, then the declared ones in the order given.
    REQUIRE(op["parameters"].size() == 4);
    CHECK(op["parameters"][0]["name"] == "list");
    CHECK(op["parameters"][0]["schema"] == json{{"type", "string"}});
    CHECK(op["parameters"][1] == json{{"name", "full"},
                                      {"in", "query"},
                                      {"required", false},
                                      {"description", "with history"},
                                      {"schema", {{"type", "boolean"}}}});
    CHECK(op["parameters"][2]["schema"] == json{{"type", "integer"}, {"format", "int64"}});
    CHECK(op["parameters"][2]["required"] == true);
    CHECK(op["parameters"][3]["in"] == "header");
    CHECK_FALSE(op["parameters"][3].contains("description"));
    CHECK(op["responses"]["200"] ==
          json{{"description", "the to-do"},
               {"content", {{"application/json", {{"schema", {{"type", "object"}}}}}}}});
    CHECK(op["responses"]["404"] == json{{"description", "no such to-do"}});
    CHECK_FALSE(op["responses"].contains("default"));
}

TEST_CASE("schema_of names the types the typed getters convert to", "[openapi]") {
    CHECK(tern::schema_of<int>() == json{{"type", "integer"}, {"format", "int32"}});
    // OpenAPI's int32 and int64 are signed: an unsigned 32-bit value from 2^31, which tern's
    // conversion accepts, is an int64 by the document, and an unsigned 64-bit one from 2^63
    // fits neither format (none is named; the maximum says it).
    CHECK(tern::schema_of<unsigned>() ==
          json{{"type", "integer"}, {"format", "int64"}, {"minimum", 0}, {"maximum", 4294967295U}});
    CHECK(tern::schema_of<unsigned long long>() ==
          json{{"type", "integer"}, {"minimum", 0}, {"maximum", 18446744073709551615ULL}});
    CHECK(tern::schema_of<unsigned short>() ==
          json{{"type", "integer"}, {"minimum", 0}, {"maximum", 65535U}});
    CHECK(tern::schema_of<long long>() == json{{"type", "integer"}, {"format", "int64"}});
    CHECK(tern::schema_of<short>() == json{{"type", "integer"}});
    CHECK(tern::schema_of<double>() == json{{"type", "number"}, {"format", "double"}});
    CHECK(tern::schema_of<float>() == json{{"type", "number"}, {"format", "float"}});
    CHECK(tern::schema_of<bool>() == json{{"type", "boolean"}});
    CHECK(tern::schema_of<std::string>() == json{{"type", "string"}});
}

TEST_CASE("request bodies, extensions, hidden routes and the document's own fields", "[openapi]") {
    const api_doc create = api_doc()
                               .request_body(json{{"type", "object"}})
                               .request_body(json{{"type", "string"}}, "text/plain", false)
                               .response(201, "made")
                               .extend(json{{"x-rate-limit", 10}, {"summary", "replaced"}});
    const api_doc secret = api_doc().summary("not shown").hidden();
    table t;
    t.add("POST", "/todos", &create).add("GET", "/internal", &secret).add("GET", "/todos");
    tern::openapi_info info;
    info.title = "Todos";
    info.version = "2.1";
    info.description = "A list.";
    info.extra = json{{"servers", json::array({{{"url", "http://localhost:8080"}}})}};
    const json doc = t.document(info);
    CHECK(doc["info"] == json{{"title", "Todos"}, {"version", "2.1"}, {"description", "A list."}});
    CHECK(doc["servers"][0]["url"] == "http://localhost:8080");
    CHECK_FALSE(doc["paths"].contains("/internal"));
    const json& post = doc["paths"]["/todos"]["post"];
    CHECK(post["summary"] == "replaced");
    CHECK(post["x-rate-limit"] == 10);
    // The second call adds a content type and sets `required` for the body as a whole.
    CHECK(post["requestBody"]["required"] == false);
    CHECK(post["requestBody"]["content"]["application/json"]["schema"]["type"] == "object");
    CHECK(post["requestBody"]["content"]["text/plain"]["schema"]["type"] == "string");
    CHECK(doc["paths"]["/todos"].contains("get"));
}

TEST_CASE("a description naming a path parameter the pattern lacks, or one twice, is refused",
          "[openapi]") {
    CHECK_NOTHROW(check_doc_against_pattern(api_doc().path_param<int>("id"), "/t/{id}"));
    CHECK_NOTHROW(
        check_doc_against_pattern(api_doc().path_param<std::string>("rest"), "/f/<rest>"));
    CHECK_NOTHROW(check_doc_against_pattern(api_doc().path_param<int>("wildcard"), "/a/*"));
    CHECK_THROWS_WITH(check_doc_against_pattern(api_doc().path_param<int>("id"), "/t/{key}"),
                      Catch::Contains("names path parameter \"id\", which the pattern does not "
                                      "capture"));
    CHECK_THROWS_WITH(
        check_doc_against_pattern(api_doc().path_param<int>("id").path_param<int>("id"), "/t/{id}"),
        Catch::Contains("twice"));
    // Query parameters are not checked against the pattern.
    CHECK_NOTHROW(check_doc_against_pattern(api_doc().query_param<int>("id"), "/t"));
}

}  // namespace unit_test_app_openapi

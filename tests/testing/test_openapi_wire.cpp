// app.openapi and app.swagger_ui over the wire, written with the test kit: the document of
// an app's routes (groups, described and plain routes, limits kept), the Swagger UI page and
// its files, and the setup errors.

#include <catch2/catch.hpp>
#include <tern/json.hpp>
#include <tern/openapi.hpp>
#include <tern/tern.hpp>
#include <tern/testing.hpp>

#include "support/temp_dir.hpp"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

namespace kit_test_openapi_wire {

namespace {

void ok(tern::context& ctx) { ctx.text("ok"); }

// A directory with stand-ins for Swagger UI's two files, removed at the end of the scope.
struct fake_assets {
    tern_test::temp_dir made{"tern-swagger-"};
    std::filesystem::path dir = made.path;
    fake_assets() {
        std::ofstream(dir / "swagger-ui-bundle.js") << "var SwaggerUIBundle = 1; // bundle";
        std::ofstream(dir / "swagger-ui.css") << "body { margin: 0 } /* style */";
    }
};

}  // namespace

TEST_CASE("app.openapi serves the routes of groups, described and plain, and leaves out its own",
          "[openapi]") {
    tern::app app;
    app.threads(1);
    app.get("/", ok);
    app.group("/api", [](tern::group& api) {
        api.get("/todos/{id}", tern::documented(tern::api_doc()
                                                    .summary("One to-do")
                                                    .path_param<int>("id", "its id")
                                                    .response(200, "the to-do"),
                                                ok));
        // Described and limited, in both orders.
        api.post("/todos",
                 tern::body_limit(16, tern::documented(tern::api_doc().summary("Add one"), ok)));
        api.put("/todos/{id}",
                tern::documented(tern::api_doc().summary("Replace one"), tern::body_limit(16, ok)));
    });
    app.sse("/events", [](tern::context&, tern::sse_client) {});
    app.ws("/chat", [](tern::ws_handlers&) {});
    tern::openapi_info info;
    info.title = "Todo API";
    info.version = "3";
    app.openapi("/openapi.json", info);
    tern::testing::test(app, [](tern::testing::server&, tern::testing::client& http) {
        const auto r = http.get("/openapi.json");
        REQUIRE(r.status == 200);
        CHECK(r.header("content-type") == "application/json");
        const tern::json doc = r.json();
        CHECK(doc["info"]["title"] == "Todo API");
        CHECK(doc["paths"]["/"]["get"]["responses"].contains("default"));
        CHECK(doc["paths"]["/api/todos/{id}"]["get"]["summary"] == "One to-do");
        CHECK(doc["paths"]["/api/todos/{id}"]["get"]["parameters"][0]["schema"]["type"] ==
              "integer");
        CHECK(doc["paths"]["/api/todos/{id}"]["put"]["summary"] == "Replace one");
        CHECK(doc["paths"]["/api/todos"]["post"]["summary"] == "Add one");
        CHECK_FALSE(doc["paths"].contains("/openapi.json"));
        // SSE and WebSocket routes say what they are.
        CHECK(doc["paths"]["/events"]["get"]["responses"]["200"]["content"].contains(
            "text/event-stream"));
        CHECK(doc["paths"]["/chat"]["get"]["responses"].contains("101"));
        // The same document every time.
        CHECK(http.get("/openapi.json").body == r.body);
        // The limits stayed with the routes.
        CHECK(http.post("/api/todos", std::string(17, 'x')).status == 413);
        CHECK(http.put("/api/todos/1", std::string(17, 'x')).status == 413);
        CHECK(http.post("/api/todos", "small").status == 200);
    });
}

TEST_CASE("a described route whose description names a parameter its pattern lacks is refused",
          "[openapi]") {
    tern::app app;
    CHECK_THROWS_WITH(
        app.get("/todos/{key}", tern::documented(tern::api_doc().path_param<int>("id"), ok)),
        Catch::Contains("names path parameter \"id\""));
    // Refused before it was routed: the pattern is still free.
    CHECK_NOTHROW(app.get("/todos/{key}", ok));
    CHECK_THROWS_AS(app.openapi("openapi.json"), std::invalid_argument);
    CHECK_THROWS_AS(app.openapi("/api/{x}"), std::invalid_argument);
    app.openapi("/openapi.json");
    CHECK_THROWS_AS(app.openapi("/openapi.json"), std::invalid_argument);  // already routed
}

TEST_CASE("app.swagger_ui serves its page, script and style, pointed at the document",
          "[openapi]") {
    const fake_assets assets;
    tern::app app;
    app.threads(1);
    app.get("/hello", ok);
    app.openapi("/spec.json");
    app.swagger_ui("/docs", "/spec.json", assets.dir.string());
    tern::testing::test(app, [](tern::testing::server&, tern::testing::client& http) {
        const auto page = http.get("/docs");
        REQUIRE(page.status == 200);
        CHECK(page.header("content-type") == "text/html; charset=utf-8");
        CHECK(page.body.find("<script src=\"/docs/swagger-ui-bundle.js\"></script>") !=
              std::string::npos);
        CHECK(page.body.find("href=\"/docs/swagger-ui.css\"") != std::string::npos);
        CHECK(http.get("/docs/").status == 200);
        const auto bundle = http.get("/docs/swagger-ui-bundle.js");
        CHECK(bundle.body == "var SwaggerUIBundle = 1; // bundle");
        CHECK(bundle.header("cache-control") == "public, max-age=3600");
        CHECK(http.get("/docs/swagger-ui.css").body == "body { margin: 0 } /* style */");
        CHECK(http.get("/docs/swagger-initializer.js").body.find("url: \"/spec.json\"") !=
              std::string::npos);
        // Swagger UI's routes are not in the document; the app's are.
        const tern::json doc = http.get("/spec.json").json();
        CHECK(doc["paths"].size() == 1);
        CHECK(doc["paths"].contains("/hello"));
    });
}

TEST_CASE("app.swagger_ui at a path with a trailing slash, or at the root, serves its files",
          "[openapi]") {
    const fake_assets assets;
    tern::app app;
    app.threads(1);
    app.swagger_ui("/docs/", "/openapi.json", assets.dir.string());
    tern::testing::test(app, [](tern::testing::server&, tern::testing::client& http) {
        CHECK(http.get("/docs").body.find("src=\"/docs/swagger-ui-bundle.js\"") !=
              std::string::npos);
        CHECK(http.get("/docs/swagger-ui.css").status == 200);
    });
    tern::app root;
    root.threads(1);
    root.swagger_ui("/", "/openapi.json", assets.dir.string());
    tern::testing::test(root, [](tern::testing::server&, tern::testing::client& http) {
        CHECK(http.get("/").body.find("src=\"/swagger-ui-bundle.js\"") != std::string::npos);
        CHECK(http.get("/swagger-ui-bundle.js").status == 200);
    });
}

TEST_CASE("app.swagger_ui refuses a directory without Swagger UI's files", "[openapi]") {
    tern::app app;
    CHECK_THROWS_WITH(app.swagger_ui("/docs", "/openapi.json", "/nonexistent-tern-dir"),
                      Catch::Contains("holds no swagger-ui-bundle.js"));
    CHECK_THROWS_AS(app.swagger_ui("docs"), std::invalid_argument);
}

}  // namespace kit_test_openapi_wire

// The single-page-application fallback over real sockets: a browser's deep link gets the
// app's page, scripts and JSON clients keep their 404, routes still win, validators work.

#include "support/raw_client.hpp"
#include "support/temp_dir.hpp"
#include "support/test_server.hpp"

#include <catch2/catch.hpp>

#include <filesystem>
#include <optional>
#include <string>

namespace wire_test_spa_fallback_wire {

using namespace tern_test;
namespace fs = std::filesystem;

namespace {

const std::string browser_accept =
    "Accept: text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8\r\n";

tern::config with_spa(const fs::path& dir, const std::string& hosted) {
    tern::config cfg = test_config();
    tern::static_files_config files;
    files.directory = dir.string();
    files.hosted_path = hosted;
    files.spa_fallback = "index.html";
    cfg.static_files.push_back(files);
    return cfg;
}

void routes(tern::app& app) {
    app.get("/app/api/users", [](tern::context& ctx) { ctx.text("route"); });
}

}  // namespace

TEST_CASE("a browser's deep link under the hosted path gets the SPA's index page",
          "[wire][static][spa]") {
    temp_dir dir;
    dir.write("index.html", "<div id=app></div>");
    dir.write("main.js", "boot()");
    test_server server(routes, with_spa(dir.path, "/app"));
    raw_client c = server.client();

    c.send(get_request("/app/users/42/settings", browser_accept));
    const response deep = c.read_response();
    INFO(describe(deep));
    CHECK(deep.status == 200);
    CHECK(deep.body == "<div id=app></div>");
    CHECK(deep.header("Content-Type") == std::optional<std::string>("text/html; charset=utf-8"));
    CHECK(deep.header("ETag").has_value());
    CHECK(deep.header("Last-Modified").has_value());
    check_common_headers(deep);

    c.send(get_request("/app/main.js", browser_accept));  // real files are themselves
    CHECK(c.read_response().body == "boot()");
    c.send(get_request("/app/api/users", browser_accept));  // routes win
    CHECK(c.read_response().body == "route");

    c.send("HEAD /app/users HTTP/1.1\r\nHost: x\r\n" + browser_accept + "\r\n" +
           get_request(alive_path));
    const response head = c.read_response(true);
    CHECK(head.status == 200);
    CHECK(head.header("Content-Length") == std::optional<std::string>("18"));
    CHECK(head.body.empty());
    CHECK(c.read_response().body == "alive");
}

TEST_CASE("missing files with an extension, non-HTML clients and other paths keep their 404",
          "[wire][static][spa]") {
    temp_dir dir;
    dir.write("index.html", "<div id=app></div>");
    test_server server(routes, with_spa(dir.path, "/app"));
    raw_client c = server.client();
    for (const auto& [target, headers] :
         {std::pair<std::string, std::string>{"/app/missing.js", browser_accept},
          {"/app/users/42", "Accept: application/json\r\n"},
          {"/app/users/42", ""},
          {"/elsewhere/route", browser_accept}}) {
        INFO(target << " with " << headers);
        c.send(get_request(target, headers));
        const response r = c.read_response();
        CHECK(r.status == 404);
        CHECK(r.body.find("id=app") == std::string::npos);
    }
    c.send(body_request("POST", "/app/users/42", "x", browser_accept));
    CHECK(c.read_response().status == 404);
}

TEST_CASE("the fallback page answers a conditional GET with 304", "[wire][static][spa]") {
    temp_dir dir;
    dir.write("index.html", "<div id=app></div>");
    test_server server(routes, with_spa(dir.path, "/app"));
    raw_client c = server.client();
    c.send(get_request("/app/a", browser_accept));
    const response first = c.read_response();
    const auto etag = first.header("ETag");
    const auto modified = first.header("Last-Modified");
    REQUIRE(etag.has_value());
    REQUIRE(modified.has_value());
    c.send(get_request("/app/b/c", browser_accept + "If-None-Match: " + *etag + "\r\n"));
    const response r = c.read_response();
    CHECK(r.status == 304);
    CHECK(r.body.empty());
    c.send(get_request("/app/d", browser_accept + "If-Modified-Since: " + *modified + "\r\n"));
    CHECK(c.read_response().status == 304);
    c.send(get_request("/app/d", browser_accept + "If-None-Match: \"other\"\r\n"));
    CHECK(c.read_response().status == 200);
}

TEST_CASE("traversal attempts under an SPA root never reach a file outside it",
          "[wire][static][spa]") {
    temp_dir dir;
    dir.write("public/index.html", "<div id=app></div>");
    dir.write("secret", "secret");
    test_server server(routes, with_spa(dir.path / "public", "/"));
    for (const char* target : {"/../secret", "/%2e%2e/secret", "/..%2fsecret", "/a/../../secret",
                               "/%c0%ae%c0%ae/secret"}) {
        INFO(target);
        raw_client c = server.client();
        c.send(get_request(target, browser_accept));
        const response r = c.read_response();
        CHECK(r.body.find("secret") == std::string::npos);
    }
    check_still_serving(server.port());
}

}  // namespace wire_test_spa_fallback_wire

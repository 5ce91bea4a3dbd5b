// The single-page-application fallback: which paths and clients get the fallback file,
// its validators, and the configurations refused when the config is read.

#include "unit/static/test_fixture.hpp"

#include <stdexcept>

namespace unit_test_static_spa_fallback {

using namespace static_test;

namespace {

struct spa_tree : temp_tree {
    spa_tree() {
        write("index.html", "<div id=app></div>");
        write("main.js", "boot()");
        write("docs/guide.txt", "guide");
    }

    tern::static_files_config spa(std::string hosted_path = "/") const {
        tern::static_files_config c = config(std::move(hosted_path));
        c.spa_fallback = "index.html";
        return c;
    }
};

const fields browser = {{"Accept", "text/html,application/xhtml+xml,*/*;q=0.8"}};

}  // namespace

TEST_CASE("a path with no file and no extension gets the fallback when HTML is accepted",
          "[static][spa]") {
    spa_tree t;
    const static_files files({t.spa()});
    auto r = get(files, "/users/42/settings", browser);
    REQUIRE(served(r));
    CHECK(r.res.status == 200);
    CHECK(body_of(r) == "<div id=app></div>");
    CHECK(r.res.content_type == "text/html; charset=utf-8");
    CHECK(r.field("Vary") == "Accept-Encoding");
    bool vary_accept = false;
    for (const auto& [n, v] : r.res.fields)
        vary_accept = vary_accept || (n == "Vary" && v == "Accept");
    CHECK(vary_accept);

    // */* alone, text/* and a trailing slash count too.
    CHECK(served(get(files, "/a", {{"Accept", "*/*"}})));
    CHECK(served(get(files, "/a/", {{"Accept", "text/*"}})));
    CHECK(served(serve(files, "HEAD", "/deep/route", browser)));
}

TEST_CASE("existing files are served as themselves, not as the fallback", "[static][spa]") {
    spa_tree t;
    const static_files files({t.spa()});
    auto r = get(files, "/main.js", browser);
    REQUIRE(served(r));
    CHECK(body_of(r) == "boot()");
    r = get(files, "/docs/guide.txt", browser);
    REQUIRE(served(r));
    CHECK(body_of(r) == "guide");
}

TEST_CASE("a missing path with an extension keeps its 404", "[static][spa]") {
    spa_tree t;
    const static_files files({t.spa()});
    CHECK(get(files, "/missing.js", browser).what == outcome::not_handled);
    CHECK(get(files, "/users/photo.png", browser).what == outcome::not_handled);
    CHECK(get(files, "/v1.2", browser).what == outcome::not_handled);
    CHECK(get(files, "/.env", browser).what == outcome::not_handled);
}

TEST_CASE("a client that does not accept HTML keeps its 404", "[static][spa]") {
    spa_tree t;
    const static_files files({t.spa()});
    CHECK(get(files, "/users/42").what == outcome::not_handled);  // no Accept at all
    CHECK(get(files, "/users/42", {{"Accept", "application/json"}}).what == outcome::not_handled);
    CHECK(get(files, "/users/42", {{"Accept", "text/html;q=0, application/json"}}).what ==
          outcome::not_handled);
    CHECK(get(files, "/users/42", {{"Accept", "*/*;q=0"}}).what == outcome::not_handled);
    CHECK(serve(files, "POST", "/users/42", browser).what == outcome::not_handled);
}

TEST_CASE("without spa_fallback every missing path is not found", "[static][spa]") {
    spa_tree t;
    const static_files files({t.config()});
    CHECK(get(files, "/users/42", browser).what == outcome::not_handled);
}

TEST_CASE("the fallback answers only under its hosted path", "[static][spa]") {
    spa_tree t;
    const static_files files({t.spa("/app")});
    CHECK(served(get(files, "/app/users/42", browser)));
    CHECK(served(get(files, "/app", browser)) == false);  // the directory: 301 to /app/
    CHECK(get(files, "/application", browser).what == outcome::not_handled);
    CHECK(get(files, "/other/route", browser).what == outcome::not_handled);
}

TEST_CASE("the fallback has the file's validators: a matching If-None-Match is 304",
          "[static][spa]") {
    spa_tree t;
    const static_files files({t.spa()});
    const auto first = get(files, "/route", browser);
    REQUIRE(served(first));
    const std::string etag(first.field("ETag"));
    const std::string modified(first.field("Last-Modified"));
    REQUIRE_FALSE(etag.empty());
    CHECK(get(files, "/index.html", browser).field("ETag") == etag);

    fields conditional = browser;
    conditional.push_back({"If-None-Match", etag});
    auto r = get(files, "/other/route", conditional);
    CHECK(r.what == outcome::answered);
    CHECK(r.res.status == 304);
    CHECK_FALSE(r.res.file.file);
    CHECK(r.res.body.empty());

    conditional = browser;
    conditional.push_back({"If-Modified-Since", modified});
    CHECK(get(files, "/route", conditional).res.status == 304);
}

TEST_CASE("traversal is refused before any fallback", "[static][spa]") {
    spa_tree t;
    t.write("secret", "outside", true);
    const static_files files({t.spa()});
    const auto r = get(files, "/a/%2e%2e/%2e%2e/secret", browser);
    CHECK(r.what == outcome::status_only);
    CHECK(r.res.status == 400);
    CHECK_FALSE(r.res.file.file);
    CHECK(r.res.body.empty());
    const auto climb = get(files, "/../../secret", browser);
    CHECK(climb.res.status == 400);
    CHECK_FALSE(climb.res.file.file);
    CHECK(climb.res.body.empty());
}

TEST_CASE("a missing fallback file leaves the 404", "[static][spa]") {
    spa_tree t;
    auto c = t.spa();
    c.spa_fallback = "shell/app.html";
    const static_files files({c});
    CHECK(get(files, "/route", browser).what == outcome::not_handled);
    t.write("shell/app.html", "<p>shell</p>");
    const auto r = get(files, "/route", browser);
    REQUIRE(served(r));
    CHECK(body_of(r) == "<p>shell</p>");
}

TEST_CASE("spa_fallback must be a normalized relative path", "[static][spa]") {
    spa_tree t;
    for (const char* bad : {"../index.html", "/index.html", "a//b.html", "./index.html",
                            "a/../index.html", "dir/", "%2e%2e/x", "a\\b", ".hidden.html"}) {
        auto c = t.spa();
        c.spa_fallback = bad;
        INFO(bad);
        CHECK_THROWS_AS(static_files({c}), std::invalid_argument);
    }
    auto c = t.spa();
    c.spa_fallback = ".shell.html";
    c.allow_dotfiles = true;
    CHECK_NOTHROW(static_files({c}));
}

}  // namespace unit_test_static_spa_fallback

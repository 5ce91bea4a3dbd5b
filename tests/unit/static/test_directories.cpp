// Directories: the index file, the 301 to the slash form, no listings, hosted prefixes,
// several directories tried in order, and the checks made when the config is read.

#include "unit/static/test_fixture.hpp"

#include <chrono>
#include <stdexcept>
#include <thread>

namespace unit_test_static_directories {

using namespace static_test;

namespace {

struct site_tree : temp_tree {
    site_tree() {
        write("index.html", "<h1>home</h1>");
        write("docs/index.html", "<h1>docs</h1>");
        write("docs/guide.txt", "guide");
        mkdir("empty");
        write("my dir/index.html", "spaced");
    }
};

}  // namespace

TEST_CASE("a directory with a slash serves its index file", "[static][directory]") {
    site_tree t;
    const static_files files({t.config()});
    auto r = get(files, "/");
    REQUIRE(served(r));
    CHECK(body_of(r) == "<h1>home</h1>");
    CHECK(r.res.content_type == "text/html; charset=utf-8");
    r = get(files, "/docs/");
    REQUIRE(served(r));
    CHECK(body_of(r) == "<h1>docs</h1>");
}

TEST_CASE("a directory without a slash is 301 to the slash form when it has an index",
          "[static][directory]") {
    site_tree t;
    const static_files files({t.config()});
    auto r = get(files, "/docs");
    CHECK(r.what == outcome::status_only);
    CHECK(r.res.status == 301);
    CHECK(r.field("Location") == "/docs/");
    CHECK_FALSE(r.res.file.file);
    CHECK(r.res.body.empty());
    r = get(files, "/my%20dir");
    CHECK(r.field("Location") == "/my%20dir/");
}

TEST_CASE("the redirect keeps the query, after the fields already set", "[static][directory]") {
    site_tree t;
    const static_files files({t.config()});
    tern::detail::request req;
    req.method = "GET";
    req.path = "/docs";
    req.query = "x=1&y";
    tern::detail::response res;
    res.fields.emplace_back("X-Before", "1");
    CHECK(files.serve(req, res, test_roots()) == outcome::status_only);
    CHECK(res.status == 301);
    CHECK(res.fields == decltype(res.fields){{"X-Before", "1"}, {"Location", "/docs/?x=1&y"}});
    // The query goes out as it came, still percent-encoded.
    CHECK(get(files, "/docs?a=%20b").field("Location") == "/docs/?a=%20b");
}

TEST_CASE("the redirect is built from the normalized path, never '//host'", "[static][directory]") {
    site_tree t;
    t.mkdir("evil.example");
    t.write("evil.example/index.html", "x");
    const static_files files({t.config()});
    auto r = get(files, "//evil.example");
    CHECK(r.res.status == 301);
    CHECK(r.field("Location") == "/evil.example/");
    r = get(files, "/docs/../docs");
    CHECK(r.field("Location") == "/docs/");
}

TEST_CASE("a directory without an index is 404 (no listing), with or without slash",
          "[static][directory]") {
    site_tree t;
    const static_files files({t.config()});
    CHECK(get(files, "/empty/").what == outcome::not_handled);
    CHECK(get(files, "/empty").what == outcome::not_handled);
}

TEST_CASE("a file asked for as a directory is 404", "[static][directory]") {
    site_tree t;
    const static_files files({t.config()});
    CHECK(get(files, "/docs/guide.txt/").what == outcome::not_handled);
    CHECK(get(files, "/docs/guide.txt/x").what == outcome::not_handled);
}

TEST_CASE("the index file name is configurable, and empty turns indexes off",
          "[static][directory]") {
    site_tree t;
    t.write("docs/default.htm", "default");
    auto config = t.config();
    config.index_file = "default.htm";
    {
        const static_files files({config});
        const auto r = get(files, "/docs/");
        REQUIRE(served(r));
        CHECK(body_of(r) == "default");
        CHECK(get(files, "/").what == outcome::not_handled);
    }
    config.index_file.clear();
    const static_files files({config});
    CHECK(get(files, "/docs/").what == outcome::not_handled);
    CHECK(get(files, "/docs").what == outcome::not_handled);
    CHECK(served(get(files, "/docs/index.html")));
}

TEST_CASE("a hosted prefix serves below it and redirects its own root", "[static][directory]") {
    site_tree t;
    const static_files files({t.config("/assets/")});
    auto r = get(files, "/assets");
    CHECK(r.res.status == 301);
    CHECK(r.field("Location") == "/assets/");
    r = get(files, "/assets/");
    REQUIRE(served(r));
    CHECK(body_of(r) == "<h1>home</h1>");
    r = get(files, "/assets/docs");
    CHECK(r.field("Location") == "/assets/docs/");
    CHECK(served(get(files, "/assets/docs/guide.txt")));
    CHECK(get(files, "/docs/guide.txt").what == outcome::not_handled);
    CHECK(get(files, "/assetsdocs/guide.txt").what == outcome::not_handled);
}

TEST_CASE("several directories are tried in order, a missing file falls through",
          "[static][directory]") {
    site_tree t;
    t.write("second/only-here.txt", "second", true);
    t.write("second/index.html", "second index", true);
    t.write("second/.well-known/acme", "token", true);
    auto second = t.config();
    second.directory = (t.base / "second").string();
    second.allow_dotfiles = true;
    const static_files files({t.config(), second});
    CHECK_FALSE(files.empty());
    auto r = get(files, "/only-here.txt");
    REQUIRE(served(r));
    CHECK(body_of(r) == "second");
    r = get(files, "/");
    REQUIRE(served(r));
    CHECK(body_of(r) == "<h1>home</h1>");
    // Hidden in the first directory, allowed in the second.
    r = get(files, "/.well-known/acme");
    REQUIRE(served(r));
    CHECK(body_of(r) == "token");
    CHECK(get(files, "/nowhere.txt").what == outcome::not_handled);
}

TEST_CASE("no directories: nothing is handled", "[static][directory]") {
    const static_files files({});
    CHECK(files.empty());
    CHECK(get(files, "/").what == outcome::not_handled);
}

TEST_CASE("Cache-Control is sent only when configured", "[static][directory]") {
    site_tree t;
    auto config = t.config();
    CHECK(get(static_files({config}), "/docs/guide.txt").field("Cache-Control").empty());
    config.cache_control = "public, max-age=3600";
    CHECK(get(static_files({config}), "/docs/guide.txt").field("Cache-Control") ==
          "public, max-age=3600");
}

TEST_CASE("a bad config throws std::invalid_argument at setup", "[static][config]") {
    site_tree t;
    const auto bad = [&](auto change) {
        auto config = t.config();
        change(config);
        return static_files({config});
    };
    using config_t = tern::static_files_config;
    CHECK_THROWS_AS(bad([](config_t& c) { c.directory.clear(); }), std::invalid_argument);
    CHECK_THROWS_AS(bad([&](config_t& c) { c.directory = (t.base / "missing").string(); }),
                    std::invalid_argument);
    CHECK_THROWS_AS(bad([&](config_t& c) { c.directory = (t.root / "index.html").string(); }),
                    std::invalid_argument);
    for (const char* hosted :
         {"", "assets", "/a/../b", "/a//b", "/a/./b", "/a b", "/a?b", "/a#b", "/a\\b", "/.."}) {
        INFO(hosted);
        CHECK_THROWS_AS(bad([&](config_t& c) { c.hosted_path = hosted; }), std::invalid_argument);
    }
    for (const char* index : {".", "..", "a/b", ".index.html"}) {
        INFO(index);
        CHECK_THROWS_AS(bad([&](config_t& c) { c.index_file = index; }), std::invalid_argument);
    }
    CHECK_THROWS_AS(bad([](config_t& c) { c.cache_control = "max-age=1\r\nX-Evil: 1"; }),
                    std::invalid_argument);
    CHECK_THROWS_AS(bad([](config_t& c) {
                        c.extra_mime_types = {{"x", "a\nb"}};
                    }),
                    std::invalid_argument);
    CHECK_NOTHROW(bad([](config_t& c) { c.hosted_path = "/a/b/"; }));
}

TEST_CASE("a root replaced at its path is served from its new directory within a second",
          "[static][directory]") {
    temp_tree t;
    t.write("a.txt", "old");
    const static_files files({t.config()});
    REQUIRE(body_of(get(files, "/a.txt")) == "old");
    // A deploy that swaps the whole directory: the old one moves away, a new one takes its
    // path. The root the loop keeps open (test_roots) is checked against the path once a
    // second.
    fs::rename(t.root, t.base / "previous");
    fs::create_directory(t.root);
    t.write("a.txt", "new");
    std::this_thread::sleep_for(std::chrono::milliseconds(1100));
    CHECK(body_of(get(files, "/a.txt")) == "new");
    // A root that is gone is a 404 for everything, not the files of the old directory.
    fs::rename(t.root, t.base / "gone");
    std::this_thread::sleep_for(std::chrono::milliseconds(1100));
    CHECK_FALSE(served(get(files, "/a.txt")));
}

}  // namespace unit_test_static_directories

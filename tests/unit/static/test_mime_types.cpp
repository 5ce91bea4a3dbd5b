// Content-Type by extension: the built-in table, case, charset on text, extra types.

#include "static/mime_types.hpp"
#include "unit/static/test_fixture.hpp"

#include <map>
#include <stdexcept>
#include <string>

namespace unit_test_static_mime_types {

using namespace static_test;
using tern::detail::mime_types;

TEST_CASE("common web types come from the built-in table", "[static][mime]") {
    const mime_types types;
    CHECK(types.lookup("index.html") == "text/html; charset=utf-8");
    CHECK(types.lookup("site.css") == "text/css; charset=utf-8");
    CHECK(types.lookup("app.js") == "text/javascript; charset=utf-8");
    CHECK(types.lookup("app.mjs") == "text/javascript; charset=utf-8");
    CHECK(types.lookup("data.json") == "application/json");
    CHECK(types.lookup("logo.svg") == "image/svg+xml");
    CHECK(types.lookup("photo.jpg") == "image/jpeg");
    CHECK(types.lookup("photo.jpeg") == "image/jpeg");
    CHECK(types.lookup("icon.png") == "image/png");
    CHECK(types.lookup("anim.webp") == "image/webp");
    CHECK(types.lookup("font.woff2") == "font/woff2");
    CHECK(types.lookup("module.wasm") == "application/wasm");
    CHECK(types.lookup("clip.mp4") == "video/mp4");
    CHECK(types.lookup("doc.pdf") == "application/pdf");
    CHECK(types.lookup("readme.txt") == "text/plain; charset=utf-8");
    CHECK(types.lookup("favicon.ico") == "image/vnd.microsoft.icon");
    CHECK(types.lookup("site.webmanifest") == "application/manifest+json");
}

TEST_CASE("every text type says charset=utf-8", "[static][mime]") {
    for (const char* ext : {"html", "htm", "css", "js", "txt", "csv", "md", "vtt", "ics"}) {
        INFO(ext);
        const auto type = mime_types::builtin(ext);
        CHECK(type.starts_with("text/"));
        CHECK(type.ends_with("; charset=utf-8"));
    }
}

TEST_CASE("extensions compare case-insensitively, the last one counts", "[static][mime]") {
    const mime_types types;
    CHECK(types.lookup("PHOTO.JPG") == "image/jpeg");
    CHECK(types.lookup("Index.HtMl") == "text/html; charset=utf-8");
    CHECK(types.lookup("archive.tar.gz") == "application/gzip");
    CHECK(types.lookup("min.v2.js") == "text/javascript; charset=utf-8");
}

TEST_CASE("no or unknown extension is application/octet-stream", "[static][mime]") {
    const mime_types types;
    CHECK(types.lookup("README") == "application/octet-stream");
    CHECK(types.lookup(".htaccess") == "application/octet-stream");
    CHECK(types.lookup("file.") == "application/octet-stream");
    CHECK(types.lookup("file.unknownext") == "application/octet-stream");
}

TEST_CASE("extra types extend and override the table", "[static][mime]") {
    const mime_types types(std::map<std::string, std::string>{{"foo", "application/x-foo"},
                                                              {".Bar", "text/x-bar; charset=utf-8"},
                                                              {"js", "application/javascript"}});
    CHECK(types.lookup("a.foo") == "application/x-foo");
    CHECK(types.lookup("a.FOO") == "application/x-foo");
    CHECK(types.lookup("a.bar") == "text/x-bar; charset=utf-8");
    CHECK(types.lookup("a.js") == "application/javascript");
    CHECK(types.lookup("a.css") == "text/css; charset=utf-8");
}

TEST_CASE("invalid extra types throw at setup", "[static][mime]") {
    using extra = std::map<std::string, std::string>;
    CHECK_THROWS_AS(mime_types(extra{{"", "text/plain"}}), std::invalid_argument);
    CHECK_THROWS_AS(mime_types(extra{{".", "text/plain"}}), std::invalid_argument);
    CHECK_THROWS_AS(mime_types(extra{{"a.b", "text/plain"}}), std::invalid_argument);
    CHECK_THROWS_AS(mime_types(extra{{"x", ""}}), std::invalid_argument);
    CHECK_THROWS_AS(mime_types(extra{{"x", "text/plain\r\nX-Evil: 1"}}), std::invalid_argument);
}

TEST_CASE("a served file carries its Content-Type, by the name requested",
          "[static][mime][symlink]") {
    temp_tree t;
    t.write("style.css", "body{}");
    t.write("data.foo", "x");
    t.symlink("style.css", "alias.txt");
    auto config = t.config();
    config.extra_mime_types = {{"foo", "application/x-foo"}};
    const static_files files({config});
    CHECK(get(files, "/style.css").res.content_type == "text/css; charset=utf-8");
    CHECK(get(files, "/data.foo").res.content_type == "application/x-foo");
    CHECK(get(files, "/alias.txt").res.content_type == "text/plain; charset=utf-8");
}

TEST_CASE(
    "two mounts of one root with their own extra types each answer with their own, "
    "cached or not",
    "[static][mime]") {
    // The loop's file cache is keyed by root and name, and a cached file keeps the type its
    // mount chose: another mount of the same root must not get that type from the cache.
    temp_tree t;
    t.write("model.foo", "x");
    auto first = t.config();
    first.hosted_path = "/a";
    first.extra_mime_types = {{"foo", "application/x-foo"}};
    auto second = t.config();
    second.hosted_path = "/b";
    const static_files files({first, second});
    for (int round = 0; round < 3; ++round) {  // the first round stores, the others hit
        INFO(round);
        CHECK(get(files, "/a/model.foo").res.content_type == "application/x-foo");
        CHECK(get(files, "/b/model.foo").res.content_type == "application/octet-stream");
    }
}

}  // namespace unit_test_static_mime_types

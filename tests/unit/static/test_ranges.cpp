// Byte ranges: one range is 206 + Content-Range, an unsatisfiable one 416, anything else
// the whole file; If-Range decides whether the range still applies.

#include "static/byte_ranges.hpp"
#include "unit/static/test_fixture.hpp"

#include <limits>

namespace unit_test_static_ranges {

using namespace static_test;
using tern::detail::byte_range;
using tern::detail::parse_byte_range;
using range_kind = tern::detail::byte_range::kind;

namespace {

/// The range as "offset+length", or "full" / "416".
std::string range_of(std::string_view value, std::uint64_t size) {
    const byte_range r = parse_byte_range(value, size);
    switch (r.what) {
        case range_kind::full:
            return "full";
        case range_kind::unsatisfiable:
            return "416";
        case range_kind::partial:
            break;
    }
    return std::to_string(r.offset) + "+" + std::to_string(r.length);
}

constexpr std::string_view digits = "0123456789";

struct ranged_tree : temp_tree {
    ranged_tree() {
        write("d.txt", digits);
        write("empty.txt", "");
    }
};

}  // namespace

TEST_CASE("single ranges at the edges of a file", "[static][range]") {
    CHECK(range_of("bytes=0-0", 10) == "0+1");
    CHECK(range_of("bytes=9-9", 10) == "9+1");
    CHECK(range_of("bytes=0-9", 10) == "0+10");
    CHECK(range_of("bytes=0-", 10) == "0+10");
    CHECK(range_of("bytes=9-", 10) == "9+1");
    CHECK(range_of("bytes=-1", 10) == "9+1");
    CHECK(range_of("bytes=-10", 10) == "0+10");
    CHECK(range_of("bytes=2-5", 10) == "2+4");
}

TEST_CASE("a last byte past the end is clamped, a long suffix is the whole file",
          "[static][range]") {
    CHECK(range_of("bytes=5-100", 10) == "5+5");
    CHECK(range_of("bytes=0-99999999999999999999999", 10) == "0+10");
    CHECK(range_of("bytes=-11", 10) == "0+10");
    CHECK(range_of("bytes=-99999999999999999999999", 10) == "0+10");
}

TEST_CASE("unsatisfiable ranges: start at or past the end, -0, any range of an empty file",
          "[static][range]") {
    CHECK(range_of("bytes=10-", 10) == "416");
    CHECK(range_of("bytes=10-20", 10) == "416");
    CHECK(range_of("bytes=99999999999999999999999-", 10) == "416");
    CHECK(range_of("bytes=-0", 10) == "416");
    CHECK(range_of("bytes=0-", 0) == "416");
    CHECK(range_of("bytes=-5", 0) == "416");
}

TEST_CASE("malformed, foreign-unit or multiple ranges are ignored", "[static][range]") {
    for (const char* value :
         {"bytes=5-2", "bytes=", "bytes=-", "bytes=a-b", "bytes=1-2-3", "bytes=+1-2",
          "bytes= 1 - 2", "bytes 0-1", "items=0-1", "0-1", "bytes=0-1,2-3", "bytes=0-0,-1",
          "bytes=-1,0-0,1-1,2-2", "bytes=0x1-2", "bytes=10-20,30-40"}) {
        INFO(value);
        CHECK(range_of(value, 10) == "full");
    }
}

TEST_CASE("the unit is case-insensitive, OWS and empty members are tolerated", "[static][range]") {
    CHECK(range_of("Bytes=1-2", 10) == "1+2");
    CHECK(range_of("BYTES=1-2", 10) == "1+2");
    CHECK(range_of("bytes= 1-2 ", 10) == "1+2");
    CHECK(range_of("bytes=,1-2,", 10) == "1+2");
}

TEST_CASE("thousands of ranges are answered with the whole file, once", "[static][range]") {
    std::string many = "bytes=0-0";
    for (int i = 0; i < 5000; ++i) many += ",0-0";
    CHECK(range_of(many, 10) == "full");
}

TEST_CASE("a satisfiable range is 206 with Content-Range and the right bytes", "[static][range]") {
    ranged_tree t;
    const static_files files({t.config()});
    auto r = get(files, "/d.txt", {{"Range", "bytes=0-0"}});
    CHECK(r.res.status == 206);
    CHECK(r.field("Content-Range") == "bytes 0-0/10");
    CHECK(body_of(r) == "0");

    r = get(files, "/d.txt", {{"Range", "bytes=-1"}});
    CHECK(r.res.status == 206);
    CHECK(r.field("Content-Range") == "bytes 9-9/10");
    CHECK(body_of(r) == "9");

    r = get(files, "/d.txt", {{"range", "bytes=3-"}});
    CHECK(r.res.status == 206);
    CHECK(r.field("Content-Range") == "bytes 3-9/10");
    CHECK(body_of(r) == "3456789");
    CHECK(r.res.content_type == "text/plain; charset=utf-8");
    CHECK(r.field("Accept-Ranges") == "bytes");
}

TEST_CASE("an unsatisfiable range is 416 with the current length", "[static][range]") {
    ranged_tree t;
    const static_files files({t.config()});
    auto r = get(files, "/d.txt", {{"Range", "bytes=10-"}});
    CHECK(r.what == outcome::status_only);
    CHECK(r.res.status == 416);
    CHECK(r.field("Content-Range") == "bytes */10");
    CHECK_FALSE(r.res.file.file);
    CHECK(r.res.body.empty());
    r = get(files, "/d.txt", {{"Range", "bytes=-0"}});
    CHECK(r.res.status == 416);
    r = get(files, "/empty.txt", {{"Range", "bytes=0-"}});
    CHECK(r.res.status == 416);
    CHECK(r.field("Content-Range") == "bytes */0");
}

TEST_CASE("an empty file without a Range is 200 with length 0", "[static][range]") {
    ranged_tree t;
    const static_files files({t.config()});
    const auto r = get(files, "/empty.txt");
    CHECK(r.res.status == 200);
    CHECK(served(r));
    CHECK(length_of(r) == 0);
    CHECK(body_of(r).empty());
}

TEST_CASE("multiple or malformed ranges give the whole file with 200", "[static][range]") {
    ranged_tree t;
    const static_files files({t.config()});
    for (const char* value : {"bytes=0-1,3-4", "bytes=5-2", "lines=1-2"}) {
        INFO(value);
        const auto r = get(files, "/d.txt", {{"Range", value}});
        CHECK(r.res.status == 200);
        CHECK(r.field("Content-Range").empty());
        CHECK(body_of(r) == digits);
    }
    // Two Range fields are as good as none.
    const auto r = get(files, "/d.txt", {{"Range", "bytes=0-1"}, {"Range", "bytes=0-1"}});
    CHECK(r.res.status == 200);
}

TEST_CASE("If-Range with the current ETag or date keeps the range, otherwise 200",
          "[static][range]") {
    ranged_tree t;
    t.set_mtime("d.txt", 784111777);
    const static_files files({t.config()});
    const std::string etag(get(files, "/d.txt").field("ETag"));
    const std::string weak = "W/" + etag;

    CHECK(get(files, "/d.txt", {{"Range", "bytes=0-1"}, {"If-Range", etag}}).res.status == 206);
    CHECK(get(files, "/d.txt",
              {{"Range", "bytes=0-1"}, {"If-Range", "Sun, 06 Nov 1994 08:49:37 GMT"}})
              .res.status == 206);
    CHECK(get(files, "/d.txt", {{"Range", "bytes=0-1"}, {"If-Range", "\"stale\""}}).res.status ==
          200);
    CHECK(get(files, "/d.txt", {{"Range", "bytes=0-1"}, {"If-Range", weak}}).res.status == 200);
    CHECK(get(files, "/d.txt",
              {{"Range", "bytes=0-1"}, {"If-Range", "Sun, 06 Nov 1994 08:49:38 GMT"}})
              .res.status == 200);
    CHECK(get(files, "/d.txt", {{"Range", "bytes=0-1"}, {"If-Range", "garbage"}}).res.status ==
          200);
    // A stale If-Range also lifts an unsatisfiable range: the client gets the new file.
    CHECK(get(files, "/d.txt", {{"Range", "bytes=50-"}, {"If-Range", "\"stale\""}}).res.status ==
          200);
}

TEST_CASE("a 304 takes precedence over a Range", "[static][range]") {
    ranged_tree t;
    const static_files files({t.config()});
    const std::string etag(get(files, "/d.txt").field("ETag"));
    CHECK(get(files, "/d.txt", {{"Range", "bytes=0-1"}, {"If-None-Match", etag}}).res.status ==
          304);
}

TEST_CASE("HEAD with a Range answers as GET would", "[static][range]") {
    ranged_tree t;
    const static_files files({t.config()});
    const fields range{{"Range", "bytes=2-3"}};
    const auto g = serve(files, "GET", "/d.txt", range);
    const auto h = serve(files, "HEAD", "/d.txt", range);
    CHECK(h.res.status == 206);
    CHECK(h.res.content_type == g.res.content_type);
    CHECK(h.res.fields == g.res.fields);
    CHECK(length_of(h) == 2);
}

}  // namespace unit_test_static_ranges

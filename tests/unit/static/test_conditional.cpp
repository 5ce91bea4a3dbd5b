// Validators and conditional requests: ETag, Last-Modified, 304 for If-None-Match and
// If-Modified-Since, 412 for If-Match and If-Unmodified-Since, and HTTP-date parsing.

#include "http/http_date_parse.hpp"
#include "static/validators.hpp"
#include "unit/static/test_fixture.hpp"

namespace unit_test_static_conditional {

using namespace static_test;
using tern::detail::etag_list_matches;
using tern::detail::parse_http_date;

namespace {

constexpr std::time_t nov_1994 = 784111777;  // Sun, 06 Nov 1994 08:49:37 GMT

struct dated_tree : temp_tree {
    dated_tree() {
        write("a.txt", "hello");
        set_mtime("a.txt", nov_1994, 123456789);
    }
};

}  // namespace

TEST_CASE("the three HTTP-date forms parse to the same instant", "[static][date]") {
    CHECK(parse_http_date("Sun, 06 Nov 1994 08:49:37 GMT") == nov_1994);
    CHECK(parse_http_date("Sunday, 06-Nov-94 08:49:37 GMT") == nov_1994);
    CHECK(parse_http_date("Sun Nov  6 08:49:37 1994") == nov_1994);
    CHECK(parse_http_date("Thu, 01 Jan 1970 00:00:00 GMT") == 0);
    CHECK(parse_http_date("Tue, 29 Feb 2000 12:00:00 GMT") == 951825600);
}

TEST_CASE("an rfc850 two-digit year more than 50 years ahead is in the past", "[static][date]") {
    const std::time_t in_2024 = 1704067200;                                          // 2024-01-01
    CHECK(parse_http_date("Friday, 01-Jan-99 00:00:00 GMT", in_2024) == 915148800);  // 1999
    CHECK(parse_http_date("Wednesday, 01-Jan-70 00:00:00 GMT", in_2024) == 3155760000);  // 2070
    CHECK(parse_http_date("Monday, 01-Jan-24 00:00:00 GMT", in_2024) == in_2024);
}

TEST_CASE("anything but an exact HTTP-date is refused", "[static][date]") {
    CHECK_FALSE(parse_http_date(""));
    CHECK_FALSE(parse_http_date("Sun, 06 Nov 1994 08:49:37 UTC"));
    CHECK_FALSE(parse_http_date("Sun, 6 Nov 1994 08:49:37 GMT"));
    CHECK_FALSE(parse_http_date("Sun, 06 Nov 1994 08:49:37 GMT "));
    CHECK_FALSE(parse_http_date("Sun, 30 Feb 1994 08:49:37 GMT"));
    CHECK_FALSE(parse_http_date("Sun, 06 Nov 1994 24:00:00 GMT"));
    CHECK_FALSE(parse_http_date("Sun, 06 Nev 1994 08:49:37 GMT"));
    CHECK_FALSE(parse_http_date("1994-11-06T08:49:37Z"));
    CHECK_FALSE(parse_http_date("784111777"));
}

TEST_CASE("entity-tag lists compare weakly or strongly", "[static][etag]") {
    CHECK(etag_list_matches("\"x\"", "\"x\"", true));
    CHECK(etag_list_matches("W/\"x\"", "\"x\"", false));
    CHECK_FALSE(etag_list_matches("W/\"x\"", "\"x\"", true));
    CHECK(etag_list_matches("\"a\", \"b\" ,\"x\"", "\"x\"", false));
    CHECK(etag_list_matches("*", "\"x\"", true));
    CHECK_FALSE(etag_list_matches("\"xy\"", "\"x\"", false));
    CHECK_FALSE(etag_list_matches("x", "\"x\"", false));
    CHECK_FALSE(etag_list_matches("\"a\" garbage \"x\"", "\"x\"", false));
    CHECK(etag_list_matches("\"a,b\", \"x\"", "\"x\"", false));
}

TEST_CASE("files carry a strong ETag and Last-Modified from fstat", "[static][etag]") {
    dated_tree t;
    const static_files files({t.config()});
    const auto r = get(files, "/a.txt");
    REQUIRE(served(r));
    CHECK(r.field("Last-Modified") == "Sun, 06 Nov 1994 08:49:37 GMT");
    const auto etag = r.field("ETag");
    CHECK(etag.starts_with("\"5-"));
    CHECK(etag.ends_with("\""));
    CHECK(r.field("Accept-Ranges") == "bytes");
    CHECK(length_of(r) == 5);
}

TEST_CASE("the ETag changes with the content's size or modification time", "[static][etag]") {
    dated_tree t;
    // Every request opens the file here; a held file is seen changed within a second
    // (test_file_cache.cpp).
    auto config = t.config();
    config.cache_small_files = false;
    const static_files files({config});
    const std::string before(get(files, "/a.txt").field("ETag"));
    // One step of the file system's clock later: a nanosecond, or on Windows 100 ns.
#if defined(_WIN32)
    t.set_mtime("a.txt", nov_1994, 123456889);
#else
    t.set_mtime("a.txt", nov_1994, 123456790);
#endif
    const std::string touched(get(files, "/a.txt").field("ETag"));
    CHECK(touched != before);
    t.write("a.txt", "hello!");
    t.set_mtime("a.txt", nov_1994, 123456789);
    CHECK(get(files, "/a.txt").field("ETag") != before);
}

TEST_CASE("If-None-Match with the current tag is 304, with another tag 200",
          "[static][conditional]") {
    dated_tree t;
    auto config = t.config();
    config.cache_control = "max-age=60";
    const static_files files({config});
    const std::string etag(get(files, "/a.txt").field("ETag"));

    auto r = get(files, "/a.txt", {{"If-None-Match", etag}});
    CHECK(r.what == outcome::answered);
    CHECK(r.res.status == 304);
    CHECK_FALSE(r.res.file.file);
    CHECK(r.res.body.empty());
    CHECK(r.field("ETag") == etag);
    CHECK(r.field("Cache-Control") == "max-age=60");
    CHECK(r.field("Vary") == "Accept-Encoding");
    CHECK(r.res.content_type.empty());

    const std::string weak = "W/" + etag;
    CHECK(get(files, "/a.txt", {{"if-none-match", weak}}).res.status == 304);
    const std::string listed = "\"other\", " + etag;
    CHECK(get(files, "/a.txt", {{"If-None-Match", listed}}).res.status == 304);
    CHECK(get(files, "/a.txt", {{"If-None-Match", "\"other\""}, {"If-None-Match", etag}})
              .res.status == 304);
    CHECK(get(files, "/a.txt", {{"If-None-Match", "*"}}).res.status == 304);
    r = get(files, "/a.txt", {{"If-None-Match", "\"other\""}});
    CHECK(r.res.status == 200);
    CHECK(served(r));
}

TEST_CASE("If-Modified-Since at or after Last-Modified is 304, before it 200",
          "[static][conditional]") {
    dated_tree t;
    const static_files files({t.config()});
    CHECK(
        get(files, "/a.txt", {{"If-Modified-Since", "Sun, 06 Nov 1994 08:49:37 GMT"}}).res.status ==
        304);
    CHECK(
        get(files, "/a.txt", {{"If-Modified-Since", "Sun, 06 Nov 1994 09:00:00 GMT"}}).res.status ==
        304);
    CHECK(get(files, "/a.txt", {{"If-Modified-Since", "Sunday, 06-Nov-94 08:49:37 GMT"}})
              .res.status == 304);
    CHECK(
        get(files, "/a.txt", {{"If-Modified-Since", "Sun, 06 Nov 1994 08:49:36 GMT"}}).res.status ==
        200);
    CHECK(get(files, "/a.txt", {{"If-Modified-Since", "yesterday"}}).res.status == 200);
    // A date field sent twice is ignored (RFC 9110 13.1.3).
    CHECK(get(files, "/a.txt",
              {{"If-Modified-Since", "Sun, 06 Nov 1994 09:00:00 GMT"},
               {"If-Modified-Since", "Sun, 06 Nov 1994 09:00:00 GMT"}})
              .res.status == 200);
}

TEST_CASE("If-None-Match takes precedence over If-Modified-Since", "[static][conditional]") {
    dated_tree t;
    const static_files files({t.config()});
    const std::string etag(get(files, "/a.txt").field("ETag"));
    // A stale tag wins over a date that alone would give 304.
    CHECK(get(files, "/a.txt",
              {{"If-None-Match", "\"stale\""},
               {"If-Modified-Since", "Sun, 06 Nov 1994 09:00:00 GMT"}})
              .res.status == 200);
    // A matching tag wins over a date that alone would give 200.
    CHECK(get(files, "/a.txt",
              {{"If-None-Match", etag}, {"If-Modified-Since", "Sun, 06 Nov 1994 08:00:00 GMT"}})
              .res.status == 304);
}

TEST_CASE("If-Match and If-Unmodified-Since that fail are 412", "[static][conditional]") {
    dated_tree t;
    const static_files files({t.config()});
    const std::string etag(get(files, "/a.txt").field("ETag"));
    CHECK(get(files, "/a.txt", {{"If-Match", etag}}).res.status == 200);
    CHECK(get(files, "/a.txt", {{"If-Match", "*"}}).res.status == 200);
    auto r = get(files, "/a.txt", {{"If-Match", "\"other\""}});
    CHECK(r.what == outcome::status_only);
    CHECK(r.res.status == 412);
    const std::string weak = "W/" + etag;
    CHECK(get(files, "/a.txt", {{"If-Match", weak}}).res.status == 412);
    CHECK(get(files, "/a.txt", {{"If-Unmodified-Since", "Sun, 06 Nov 1994 08:00:00 GMT"}})
              .res.status == 412);
    CHECK(get(files, "/a.txt", {{"If-Unmodified-Since", "Sun, 06 Nov 1994 08:49:37 GMT"}})
              .res.status == 200);
    // If-Match present: If-Unmodified-Since is not looked at (RFC 9110 13.2.2).
    CHECK(get(files, "/a.txt",
              {{"If-Match", etag}, {"If-Unmodified-Since", "Sun, 06 Nov 1994 08:00:00 GMT"}})
              .res.status == 200);
}

TEST_CASE("HEAD gets the same result as GET", "[static][conditional]") {
    dated_tree t;
    const static_files files({t.config()});
    const auto g = serve(files, "GET", "/a.txt");
    const auto h = serve(files, "HEAD", "/a.txt");
    CHECK(h.what == g.what);
    CHECK(h.res.status == g.res.status);
    CHECK(h.res.content_type == g.res.content_type);
    CHECK(h.res.fields == g.res.fields);
    CHECK(length_of(h) == length_of(g));
    CHECK(h.res.file.offset == g.res.file.offset);
    const fields conditional{{"If-Modified-Since", "Sun, 06 Nov 1994 08:49:37 GMT"}};
    CHECK(serve(files, "HEAD", "/a.txt", conditional).res.status == 304);
}

TEST_CASE("methods other than GET and HEAD are not handled", "[static][conditional]") {
    dated_tree t;
    const static_files files({t.config()});
    for (const char* method : {"POST", "PUT", "DELETE", "OPTIONS", "get", "PATCH"}) {
        INFO(method);
        CHECK(serve(files, method, "/a.txt").what == outcome::not_handled);
    }
}

}  // namespace unit_test_static_conditional

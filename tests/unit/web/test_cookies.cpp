// Reading the Cookie header and writing Set-Cookie (RFC 6265).

#include "web/cookies.hpp"

#include <catch2/catch.hpp>

#include <chrono>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace unit_test_web_cookies {

using tern::cookie_options;
using tern::same_site;
using tern::detail::cookie_pair;
using tern::detail::format_set_cookie;
using tern::detail::parse_cookie_header;

namespace {

std::vector<std::pair<std::string, std::string>> parsed(std::string_view header) {
    std::vector<cookie_pair> pairs;
    parse_cookie_header(header, pairs);
    std::vector<std::pair<std::string, std::string>> result;
    for (const auto& p : pairs) result.emplace_back(std::string(p.name), std::string(p.value));
    return result;
}

using pairs_t = std::vector<std::pair<std::string, std::string>>;

cookie_options no_path() {
    cookie_options o;
    o.path.clear();
    return o;
}

/// 1994-11-06T08:49:37Z, the example date of RFC 9110 5.6.7.
std::chrono::system_clock::time_point rfc_example_date() {
    return std::chrono::system_clock::time_point(std::chrono::seconds(784111777));
}

}  // namespace

TEST_CASE("cookies: a browser's Cookie header splits into pairs in order", "[cookies]") {
    CHECK(parsed("id=42; theme=dark; lang=en") ==
          pairs_t{{"id", "42"}, {"theme", "dark"}, {"lang", "en"}});
}

TEST_CASE("cookies: the pairs are views into the header value", "[cookies]") {
    const std::string header = "a=1; b=2";
    std::vector<cookie_pair> pairs;
    parse_cookie_header(header, pairs);
    REQUIRE(pairs.size() == 2);
    CHECK(pairs[1].name.data() == header.data() + header.find('b'));
    CHECK(pairs[1].value.data() == header.data() + header.find('2'));
}

TEST_CASE("cookies: parsing appends to what is already in the vector", "[cookies]") {
    std::vector<cookie_pair> pairs;
    parse_cookie_header("a=1", pairs);
    parse_cookie_header("b=2", pairs);
    REQUIRE(pairs.size() == 2);
    CHECK(pairs[0].name == "a");
    CHECK(pairs[1].name == "b");
}

TEST_CASE("cookies: separators without a space and extra spaces are accepted", "[cookies]") {
    CHECK(parsed("a=1;b=2") == pairs_t{{"a", "1"}, {"b", "2"}});
    CHECK(parsed("  a=1 ;   b=2  ") == pairs_t{{"a", "1"}, {"b", "2"}});
    CHECK(parsed("a=1;;; b=2;") == pairs_t{{"a", "1"}, {"b", "2"}});
}

TEST_CASE("cookies: a value in double quotes loses them", "[cookies]") {
    CHECK(parsed("a=\"hello\"; b=\"\"") == pairs_t{{"a", "hello"}, {"b", ""}});
}

TEST_CASE("cookies: a lone or unbalanced quote stays in the value", "[cookies]") {
    CHECK(parsed("a=\"; b=\"x; c=x\"") == pairs_t{{"a", "\""}, {"b", "\"x"}, {"c", "x\""}});
}

TEST_CASE("cookies: an empty value is a cookie with an empty value", "[cookies]") {
    CHECK(parsed("a=; b=2") == pairs_t{{"a", ""}, {"b", "2"}});
}

TEST_CASE("cookies: only the first '=' separates name from value", "[cookies]") {
    CHECK(parsed("token=abc==; x=a=b") == pairs_t{{"token", "abc=="}, {"x", "a=b"}});
}

TEST_CASE("cookies: pairs without '=' or with a bad name are skipped", "[cookies]") {
    CHECK(parsed("flag; =v; a b=1; ok=1; na(me=2; \x01=3") == pairs_t{{"ok", "1"}});
}

TEST_CASE("cookies: an empty or blank header gives nothing", "[cookies]") {
    CHECK(parsed("").empty());
    CHECK(parsed("   ").empty());
    CHECK(parsed(";;").empty());
}

TEST_CASE("cookies: a repeated name is kept twice, in order", "[cookies]") {
    CHECK(parsed("a=1; a=2") == pairs_t{{"a", "1"}, {"a", "2"}});
}

TEST_CASE("cookies: the default options give a site-wide session cookie", "[cookies]") {
    CHECK(format_set_cookie("id", "42", {}) == "id=42; Path=/");
}

TEST_CASE("cookies: an empty path writes no Path attribute", "[cookies]") {
    CHECK(format_set_cookie("id", "42", no_path()) == "id=42");
}

TEST_CASE("cookies: an empty value is allowed", "[cookies]") {
    CHECK(format_set_cookie("id", "", no_path()) == "id=");
}

TEST_CASE("cookies: every attribute is written, in a fixed order", "[cookies]") {
    cookie_options o;
    o.path = "/app";
    o.domain = "example.com";
    o.max_age = std::chrono::seconds(3600);
    o.expires = rfc_example_date();
    o.secure = true;
    o.http_only = true;
    o.same_site = same_site::strict;
    CHECK(format_set_cookie("sid", "abc123", o) ==
          "sid=abc123; Path=/app; Domain=example.com; Max-Age=3600; "
          "Expires=Sun, 06 Nov 1994 08:49:37 GMT; Secure; HttpOnly; SameSite=Strict");
}

TEST_CASE("cookies: each attribute appears alone when it is the only one set", "[cookies]") {
    cookie_options o = no_path();
    SECTION("Domain") {
        o.domain = "example.org";
        CHECK(format_set_cookie("a", "1", o) == "a=1; Domain=example.org");
    }
    SECTION("Max-Age") {
        o.max_age = std::chrono::hours(24);
        CHECK(format_set_cookie("a", "1", o) == "a=1; Max-Age=86400");
    }
    SECTION("Expires") {
        o.expires = rfc_example_date();
        CHECK(format_set_cookie("a", "1", o) == "a=1; Expires=Sun, 06 Nov 1994 08:49:37 GMT");
    }
    SECTION("Secure") {
        o.secure = true;
        CHECK(format_set_cookie("a", "1", o) == "a=1; Secure");
    }
    SECTION("HttpOnly") {
        o.http_only = true;
        CHECK(format_set_cookie("a", "1", o) == "a=1; HttpOnly");
    }
    SECTION("SameSite=Lax") {
        o.same_site = same_site::lax;
        CHECK(format_set_cookie("a", "1", o) == "a=1; SameSite=Lax");
    }
    SECTION("SameSite=Strict") {
        o.same_site = same_site::strict;
        CHECK(format_set_cookie("a", "1", o) == "a=1; SameSite=Strict");
    }
    SECTION("SameSite=None with Secure") {
        o.same_site = same_site::none;
        o.secure = true;
        CHECK(format_set_cookie("a", "1", o) == "a=1; Secure; SameSite=None");
    }
}

TEST_CASE("cookies: Max-Age 0 and negative both write 0", "[cookies]") {
    cookie_options o = no_path();
    o.max_age = std::chrono::seconds(0);
    CHECK(format_set_cookie("a", "", o) == "a=; Max-Age=0");
    o.max_age = std::chrono::seconds(-5);
    CHECK(format_set_cookie("a", "", o) == "a=; Max-Age=0");
}

TEST_CASE("cookies: Expires is an IMF-fixdate in GMT, seconds truncated", "[cookies]") {
    using namespace std::chrono;
    cookie_options o = no_path();
    o.expires = system_clock::time_point(seconds(0));
    CHECK(format_set_cookie("a", "1", o) == "a=1; Expires=Thu, 01 Jan 1970 00:00:00 GMT");
    // 2024-02-29T23:59:59.900Z: a leap day, and a fraction of a second that must not round up.
    o.expires = system_clock::time_point(
        duration_cast<system_clock::duration>(seconds(1709251199) + milliseconds(900)));
    CHECK(format_set_cookie("a", "1", o) == "a=1; Expires=Thu, 29 Feb 2024 23:59:59 GMT");
    // 2038-01-19T03:14:08Z, one second past the 32-bit time_t limit.
    o.expires = system_clock::time_point(seconds(2147483648LL));
    CHECK(format_set_cookie("a", "1", o) == "a=1; Expires=Tue, 19 Jan 2038 03:14:08 GMT");
}

TEST_CASE("cookies: an Expires before 1970 is written as the epoch", "[cookies]") {
    using namespace std::chrono;
    cookie_options o = no_path();
    o.expires = system_clock::time_point(seconds(-86400 * 365));
    CHECK(format_set_cookie("a", "1", o) == "a=1; Expires=Thu, 01 Jan 1970 00:00:00 GMT");
}

TEST_CASE("cookies: names with every tchar are accepted", "[cookies]") {
    CHECK(format_set_cookie("a!#$%&'*+-.^_`|~Z9", "v", no_path()) == "a!#$%&'*+-.^_`|~Z9=v");
}

TEST_CASE("cookies: a name that is not a token is refused", "[cookies]") {
    const cookie_options o;
    CHECK_THROWS_AS(format_set_cookie("", "v", o), std::invalid_argument);
    for (std::string_view bad : {"a b", "a=b", "a;b", "a,b", "a\"b", "a(b)", "a/b", "a\r\nb",
                                 "a\tb", "caf\xC3\xA9", "a@b", "a:b", "[a]", "a{b}"}) {
        INFO(bad);
        CHECK_THROWS_AS(format_set_cookie(bad, "v", o), std::invalid_argument);
    }
    CHECK_THROWS_AS(format_set_cookie(std::string_view("a\0b", 3), "v", o), std::invalid_argument);
}

TEST_CASE("cookies: every cookie-octet is accepted in a value", "[cookies]") {
    std::string all;
    for (int c = 0x21; c <= 0x7E; ++c) {
        if (c != '"' && c != ',' && c != ';' && c != '\\') all += static_cast<char>(c);
    }
    CHECK(format_set_cookie("a", all, no_path()) == "a=" + all);
}

TEST_CASE("cookies: a value outside cookie-octet is refused", "[cookies]") {
    const cookie_options o;
    for (std::string_view bad :
         {"a b", "a;b", "a,b", "a\"b", "\"quoted\"", "a\\b", "a\tb", "a\rb", "a\nb",
          "x\r\nSet-Cookie: evil=1", "caf\xC3\xA9", "\x7F", "\x01"}) {
        INFO(bad);
        CHECK_THROWS_AS(format_set_cookie("a", bad, o), std::invalid_argument);
    }
    CHECK_THROWS_AS(format_set_cookie("a", std::string_view("\0", 1), o), std::invalid_argument);
}

TEST_CASE("cookies: a path or domain that would inject an attribute is refused", "[cookies]") {
    cookie_options o;
    o.path = "/; Domain=evil.example";
    CHECK_THROWS_AS(format_set_cookie("a", "1", o), std::invalid_argument);
    o.path = "/x\r\nSet-Cookie: b=2";
    CHECK_THROWS_AS(format_set_cookie("a", "1", o), std::invalid_argument);
    o.path = std::string("/x\0y", 4);
    CHECK_THROWS_AS(format_set_cookie("a", "1", o), std::invalid_argument);
    o.path = "/x\x7F";
    CHECK_THROWS_AS(format_set_cookie("a", "1", o), std::invalid_argument);

    o.path = "/";
    o.domain = "example.com; Secure";
    CHECK_THROWS_AS(format_set_cookie("a", "1", o), std::invalid_argument);
    o.domain = "example.com\n";
    CHECK_THROWS_AS(format_set_cookie("a", "1", o), std::invalid_argument);
}

TEST_CASE("cookies: a path may hold characters other than semicolons and CTLs", "[cookies]") {
    cookie_options o;
    o.path = "/a b/c,d/\"e\"";
    CHECK(format_set_cookie("a", "1", o) == "a=1; Path=/a b/c,d/\"e\"");
}

TEST_CASE("cookies: SameSite=None without Secure is refused", "[cookies]") {
    cookie_options o;
    o.same_site = same_site::none;
    CHECK_THROWS_AS(format_set_cookie("a", "1", o), std::invalid_argument);
    o.secure = true;
    CHECK_NOTHROW(format_set_cookie("a", "1", o));
}

TEST_CASE("cookies: a written cookie reads back the same", "[cookies]") {
    cookie_options o;
    o.http_only = true;
    const std::string header = format_set_cookie("session", "a1B2-c3_d4.e5~", o);
    const std::string sent = header.substr(0, header.find(';'));
    CHECK(parsed(sent) == pairs_t{{"session", "a1B2-c3_d4.e5~"}});
}

}  // namespace unit_test_web_cookies

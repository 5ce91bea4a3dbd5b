// The request path below a hosted prefix, resolved as strings: decoded once, dot segments
// removed before decoding, every encoding trick refused.

#include "static/path_resolver.hpp"

#include <catch2/catch.hpp>

#include <string>

namespace unit_test_static_path_resolver {

using tern::detail::path_status;
using tern::detail::resolve_path;
using tern::detail::resolved_path;
using tern::detail::valid_utf8;

namespace {

path_status status_of(std::string_view raw) {
    resolved_path out;
    return resolve_path(raw, out);
}

resolved_path resolved(std::string_view raw) {
    resolved_path out;
    REQUIRE(resolve_path(raw, out) == path_status::ok);
    return out;
}

}  // namespace

TEST_CASE("a plain path decodes once into '/'-joined segments", "[static][path]") {
    const auto p = resolved("/css/my%20site.css");
    CHECK(p.decoded == "css/my site.css");
    CHECK(p.raw == "/css/my%20site.css");
    CHECK_FALSE(p.trailing_slash);
    CHECK_FALSE(p.hidden);
}

TEST_CASE("the root is the empty path, with or without a slash", "[static][path]") {
    auto p = resolved("");
    CHECK(p.decoded.empty());
    CHECK(p.raw.empty());
    CHECK_FALSE(p.trailing_slash);
    p = resolved("/");
    CHECK(p.decoded.empty());
    CHECK(p.trailing_slash);
}

TEST_CASE("empty segments collapse and a trailing slash is remembered", "[static][path]") {
    const auto p = resolved("//a///b//");
    CHECK(p.decoded == "a/b");
    CHECK(p.raw == "/a/b");
    CHECK(p.trailing_slash);
}

TEST_CASE("literal dot segments resolve inside, and a final one asks for a directory",
          "[static][path]") {
    CHECK(resolved("/a/./b/../c").decoded == "a/c");
    auto p = resolved("/a/b/..");
    CHECK(p.decoded == "a");
    CHECK(p.trailing_slash);
    p = resolved("/a/.");
    CHECK(p.decoded == "a");
    CHECK(p.trailing_slash);
}

TEST_CASE("literal dot segments above the root escape", "[static][path]") {
    CHECK(status_of("/..") == path_status::escapes);
    CHECK(status_of("/../a") == path_status::escapes);
    CHECK(status_of("/a/../..") == path_status::escapes);
    CHECK(status_of("/a/./../../b") == path_status::escapes);
}

TEST_CASE("segments that decode to dot segments are refused", "[static][path]") {
    CHECK(status_of("/%2e") == path_status::dot_segment);
    CHECK(status_of("/%2e%2e") == path_status::dot_segment);
    CHECK(status_of("/%2E%2E/x") == path_status::dot_segment);
    CHECK(status_of("/.%2e") == path_status::dot_segment);
    CHECK(status_of("/a/%2e.") == path_status::dot_segment);
}

TEST_CASE("encoded separators, NUL and controls are refused", "[static][path]") {
    CHECK(status_of("/a%2fb") == path_status::bad_character);
    CHECK(status_of("/a%2Fb") == path_status::bad_character);
    CHECK(status_of("/a%5cb") == path_status::bad_character);
    CHECK(status_of("/a%00") == path_status::bad_character);
    CHECK(status_of("/a%0a") == path_status::bad_character);
    CHECK(status_of("/a%7F") == path_status::bad_character);
    CHECK(status_of("/a\\b") == path_status::bad_character);
    CHECK(status_of("/a b") == path_status::bad_character);
    CHECK(status_of("/a\tb") == path_status::bad_character);
    CHECK(status_of("/\xc3\xa9") == path_status::bad_character);
    CHECK(status_of("a") == path_status::bad_character);
}

TEST_CASE("malformed escapes are refused, not kept as text", "[static][path]") {
    CHECK(status_of("/%") == path_status::bad_encoding);
    CHECK(status_of("/%4") == path_status::bad_encoding);
    CHECK(status_of("/%g0") == path_status::bad_encoding);
    CHECK(status_of("/a%%20") == path_status::bad_encoding);
}

TEST_CASE("a double encoding decodes once to literal text", "[static][path]") {
    const auto p = resolved("/%252e%252e/x");
    CHECK(p.decoded == "%2e%2e/x");
    CHECK_FALSE(p.hidden);
}

TEST_CASE("decoded UTF-8 must be valid and shortest-form", "[static][path]") {
    CHECK(resolved("/caf%C3%A9.txt").decoded == "caf\xc3\xa9.txt");
    CHECK(resolved("/%F0%9F%98%80").decoded == "\xf0\x9f\x98\x80");
    CHECK(status_of("/%c0%ae") == path_status::bad_encoding);
    CHECK(status_of("/%c1%bf") == path_status::bad_encoding);
    CHECK(status_of("/%e0%80%af") == path_status::bad_encoding);
    CHECK(status_of("/%f0%80%80%af") == path_status::bad_encoding);
    CHECK(status_of("/%ed%a0%80") == path_status::bad_encoding);
    CHECK(status_of("/%f4%90%80%80") == path_status::bad_encoding);
    CHECK(status_of("/%80") == path_status::bad_encoding);
    CHECK(status_of("/%e2%82") == path_status::bad_encoding);
}

TEST_CASE("valid_utf8 accepts every boundary code point", "[static][path]") {
    CHECK(valid_utf8("\x7f"));
    CHECK(valid_utf8("\xc2\x80"));
    CHECK(valid_utf8("\xdf\xbf"));
    CHECK(valid_utf8("\xe0\xa0\x80"));
    CHECK(valid_utf8("\xed\x9f\xbf"));
    CHECK(valid_utf8("\xee\x80\x80"));
    CHECK(valid_utf8("\xf0\x90\x80\x80"));
    CHECK(valid_utf8("\xf4\x8f\xbf\xbf"));
    CHECK_FALSE(valid_utf8("\xf5\x80\x80\x80"));
    CHECK_FALSE(valid_utf8("\xc2"));
}

TEST_CASE("a segment starting with a dot, raw or decoded, is hidden", "[static][path]") {
    CHECK(resolved("/.env").hidden);
    CHECK(resolved("/a/.git/config").hidden);
    CHECK(resolved("/%2eenv").hidden);
    CHECK(resolved("/...").hidden);
    CHECK_FALSE(resolved("/a.b/c.d").hidden);
}

TEST_CASE(
    "path resolver: the fast path for plain paths answers as the general steps do, for "
    "every path of up to six bytes over slashes, dots, percent signs and letters",
    "[static]") {
    // Every string of '/' followed by up to five bytes of this alphabet: dot segments, empty
    // segments, encodings good and bad (%2F, %2e, %C3%A9), a backslash, a non-ASCII byte.
    const std::string alphabet = "/.a%2FC\\\xc3";
    std::size_t compared = 0;
    std::string path = "/";
    const auto each = [&](auto&& self, std::size_t left) -> void {
        tern::detail::resolved_path fast;
        tern::detail::resolved_path general;
        const auto a = tern::detail::resolve_path(path, fast);
        const auto b = tern::detail::resolve_path_general(path, general);
        INFO(path);
        REQUIRE(a == b);
        if (a == tern::detail::path_status::ok) {
            REQUIRE(fast.decoded == general.decoded);
            REQUIRE(fast.raw == general.raw);
            REQUIRE(fast.trailing_slash == general.trailing_slash);
            REQUIRE(fast.hidden == general.hidden);
        }
        ++compared;
        if (left == 0) return;
        for (const char c : alphabet) {
            path.push_back(c);
            self(self, left - 1);
            path.pop_back();
        }
    };
    each(each, 5);
    CHECK(compared > 50000);
}

}  // namespace unit_test_static_path_resolver

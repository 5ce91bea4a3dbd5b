// Route pattern grammar: what parses, into which segments, and what is refused.

#include <catch2/catch.hpp>

#include <stdexcept>
#include <string>

#include "routing/path_pattern.hpp"

namespace unit_test_routing_path_pattern {

using tern::detail::path_pattern;
using tern::detail::segment_kind;
using tern::detail::trim_trailing_slash;

namespace {

// The message of the std::invalid_argument thrown for `pattern`, or "" when none is thrown.
std::string rejection(std::string_view pattern) {
    try {
        path_pattern parsed(pattern);
    } catch (const std::invalid_argument& e) {
        return e.what();
    }
    return "";
}

}  // namespace

TEST_CASE("the root pattern has no segments and is its own static path", "[path_pattern]") {
    const path_pattern p("/");
    CHECK(p.segments().empty());
    CHECK(p.is_static());
    CHECK(p.static_path() == "/");
    CHECK(p.text() == "/");
}

TEST_CASE("literal segments parse in order and make a static pattern", "[path_pattern]") {
    const path_pattern p("/api/v1.0/users");
    REQUIRE(p.segments().size() == 3);
    CHECK(p.segments()[0].kind == segment_kind::literal);
    CHECK(p.segments()[0].text == "api");
    CHECK(p.segments()[1].text == "v1.0");
    CHECK(p.segments()[2].text == "users");
    CHECK(p.is_static());
    CHECK(p.static_path() == "/api/v1.0/users");
}

TEST_CASE("a trailing slash on a pattern is ignored", "[path_pattern]") {
    const path_pattern p("/users/");
    REQUIRE(p.segments().size() == 1);
    CHECK(p.segments()[0].text == "users");
    CHECK(p.static_path() == "/users");
    CHECK(p.text() == "/users/");  // Messages still quote what the user wrote.
}

TEST_CASE("literal segments keep punctuation and percent-escapes verbatim", "[path_pattern]") {
    const path_pattern p("/a:b/~me/caf%C3%A9/x+y=z");
    REQUIRE(p.segments().size() == 4);
    CHECK(p.segments()[0].text == "a:b");
    CHECK(p.segments()[2].text == "caf%C3%A9");
    CHECK(p.segments()[3].text == "x+y=z");
    CHECK(p.is_static());
}

TEST_CASE("a braced segment is a one-segment parameter named by its contents", "[path_pattern]") {
    const path_pattern p("/users/{user_id}/posts/{Post-2}");
    REQUIRE(p.segments().size() == 4);
    CHECK(p.segments()[1].kind == segment_kind::param);
    CHECK(p.segments()[1].text == "user_id");
    CHECK(p.segments()[3].kind == segment_kind::param);
    CHECK(p.segments()[3].text == "Post-2");
    CHECK_FALSE(p.is_static());
}

TEST_CASE("an angle-bracketed last segment is a rest-of-path parameter", "[path_pattern]") {
    const path_pattern p("/files/<path>");
    REQUIRE(p.segments().size() == 2);
    CHECK(p.segments()[1].kind == segment_kind::tail_param);
    CHECK(p.segments()[1].text == "path");
    CHECK_FALSE(p.is_static());
}

TEST_CASE("a star is a one-segment wildcard inside a pattern and a tail wildcard at its end",
          "[path_pattern]") {
    const path_pattern p("/a/*/b/*");
    REQUIRE(p.segments().size() == 4);
    CHECK(p.segments()[1].kind == segment_kind::wildcard);
    CHECK(p.segments()[1].text.empty());
    CHECK(p.segments()[3].kind == segment_kind::tail_wildcard);
    CHECK_FALSE(p.is_static());

    const path_pattern root_star("/*");
    REQUIRE(root_star.segments().size() == 1);
    CHECK(root_star.segments()[0].kind == segment_kind::tail_wildcard);
}

TEST_CASE("a pattern must begin with a slash", "[path_pattern]") {
    CHECK_THROWS_AS(path_pattern(""), std::invalid_argument);
    CHECK_THROWS_AS(path_pattern("users"), std::invalid_argument);
    CHECK_THROWS_AS(path_pattern("{id}"), std::invalid_argument);
    CHECK_THROWS_AS(path_pattern("*"), std::invalid_argument);
}

TEST_CASE("an empty segment inside a pattern is refused", "[path_pattern]") {
    CHECK_THROWS_AS(path_pattern("/a//b"), std::invalid_argument);
    CHECK_THROWS_AS(path_pattern("//"), std::invalid_argument);
    CHECK_THROWS_AS(path_pattern("//a"), std::invalid_argument);
    CHECK_THROWS_AS(path_pattern("/a//"), std::invalid_argument);
}

TEST_CASE("a parameter with an empty name is refused", "[path_pattern]") {
    CHECK_THROWS_AS(path_pattern("/{}"), std::invalid_argument);
    CHECK_THROWS_AS(path_pattern("/a/<>"), std::invalid_argument);
}

TEST_CASE("a parameter that is not a whole segment is refused", "[path_pattern]") {
    CHECK_THROWS_AS(path_pattern("/{a"), std::invalid_argument);
    CHECK_THROWS_AS(path_pattern("/<a"), std::invalid_argument);
    CHECK_THROWS_AS(path_pattern("/{"), std::invalid_argument);
    CHECK_THROWS_AS(path_pattern("/a{b}"), std::invalid_argument);
    CHECK_THROWS_AS(path_pattern("/{a}b"), std::invalid_argument);
    CHECK_THROWS_AS(path_pattern("/x<a>"), std::invalid_argument);
    CHECK_THROWS_AS(path_pattern("/{a>"), std::invalid_argument);
    CHECK_THROWS_AS(path_pattern("/{a}/b}"), std::invalid_argument);
    CHECK_THROWS_AS(path_pattern("/a>"), std::invalid_argument);
}

TEST_CASE("a star mixed with other text in a segment is refused", "[path_pattern]") {
    CHECK_THROWS_AS(path_pattern("/x*"), std::invalid_argument);
    CHECK_THROWS_AS(path_pattern("/*x/y"), std::invalid_argument);
    CHECK_THROWS_AS(path_pattern("/**"), std::invalid_argument);
}

TEST_CASE("a rest-of-path parameter anywhere but last is refused", "[path_pattern]") {
    CHECK_THROWS_AS(path_pattern("/<a>/b"), std::invalid_argument);
    CHECK_THROWS_AS(path_pattern("/x/<a>/{b}"), std::invalid_argument);
    CHECK_NOTHROW(path_pattern("/x/<a>/"));  // The trailing slash is ignored, so it is last.
}

TEST_CASE("a parameter name outside letters, digits, '_' and '-' is refused", "[path_pattern]") {
    CHECK_THROWS_AS(path_pattern("/{a.b}"), std::invalid_argument);
    CHECK_THROWS_AS(path_pattern("/{a b}"), std::invalid_argument);
    CHECK_THROWS_AS(path_pattern("/{a{b}"), std::invalid_argument);
    CHECK_THROWS_AS(path_pattern("/<caf\xc3\xa9>"), std::invalid_argument);
    CHECK_NOTHROW(path_pattern("/{aZ09_-}"));
}

TEST_CASE("a parameter name used twice in one pattern is refused", "[path_pattern]") {
    CHECK_THROWS_AS(path_pattern("/{id}/{id}"), std::invalid_argument);
    CHECK_THROWS_AS(path_pattern("/{id}/x/<id>"), std::invalid_argument);
    CHECK_NOTHROW(path_pattern("/{id}/{Id}"));  // Names are case-sensitive.
    CHECK_NOTHROW(path_pattern("/*/*/*"));      // Stars have no name to repeat.
}

TEST_CASE("a rejected pattern's message quotes the pattern and says what is wrong",
          "[path_pattern]") {
    CHECK_THAT(rejection("/a//b"), Catch::Contains("\"/a//b\"") && Catch::Contains("empty"));
    CHECK_THAT(rejection("/x*"), Catch::Contains("\"/x*\"") && Catch::Contains("x*"));
    CHECK_THAT(rejection("/{id}/{id}"), Catch::Contains("\"id\"") && Catch::Contains("twice"));
    CHECK_THAT(rejection("users"), Catch::Contains("begin with '/'"));
    CHECK_THAT(rejection("/<a>/b"), Catch::Contains("last segment"));
}

TEST_CASE("trimming a request path removes one trailing slash and keeps the root",
          "[path_pattern]") {
    CHECK(trim_trailing_slash("/") == "/");
    CHECK(trim_trailing_slash("/users") == "/users");
    CHECK(trim_trailing_slash("/users/") == "/users");
    CHECK(trim_trailing_slash("/users//") == "/users/");
    const std::string_view path = "/a/b/";
    CHECK(trim_trailing_slash(path).data() == path.data());
}

}  // namespace unit_test_routing_path_pattern

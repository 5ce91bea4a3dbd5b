// tern::client's URLs taken apart and redirects resolved (src/client/url.cpp), without sockets.

#include "client/url.hpp"

#include <catch2/catch.hpp>

namespace unit_test_client_url {

using tern::detail::parse_url;
using tern::detail::resolve_location;

TEST_CASE("client URLs: scheme, host, port and target", "[client][url]") {
    auto u = parse_url("http://Example.COM/a/b?x=1#frag");
    REQUIRE(u);
    CHECK_FALSE(u->where.https);
    CHECK(u->where.host == "example.com");
    CHECK(u->where.port == 80);
    CHECK(u->target == "/a/b?x=1");
    CHECK(u->where.authority() == "example.com");

    auto s = parse_url("HTTPS://127.0.0.1:8443");
    REQUIRE(s);
    CHECK(s->where.https);
    CHECK(s->where.port == 8443);
    CHECK(s->target == "/");
    CHECK(s->where.authority() == "127.0.0.1:8443");
    CHECK(s->where.key() == "https://127.0.0.1:8443");

    auto v6 = parse_url("http://[::1]:9000?q");
    REQUIRE(v6);
    CHECK(v6->where.host == "::1");
    CHECK(v6->target == "/?q");
    CHECK(v6->where.authority() == "[::1]:9000");
    CHECK(parse_url("https://[::1]/")->where.authority() == "[::1]");
}

TEST_CASE("client URLs: what is refused", "[client][url]") {
    for (const char* bad :
         {"", "/relative", "example.com/x", "ftp://example.com/", "http://", "http:///x",
          "http://user:pw@example.com/", "http://example.com:0/", "http://example.com:65536/",
          "http://example.com:8x/", "http://ex ample.com/", "http://example.com/a b",
          "http://[::1/", "http://::1/", "http://example.com/\r\nX: y"}) {
        INFO(bad);
        CHECK_FALSE(parse_url(bad));
    }
}

TEST_CASE("client URLs: a Location against the URL it came from", "[client][url]") {
    const auto base = *parse_url("http://a.example:8080/dir/page?x=1");
    CHECK(resolve_location(base, "/other")->target == "/other");
    CHECK(resolve_location(base, "/other")->where.authority() == "a.example:8080");
    CHECK(resolve_location(base, "next?y=2")->target == "/dir/next?y=2");
    CHECK(resolve_location(base, "//b.example/z")->where.host == "b.example");
    CHECK(resolve_location(base, "//b.example/z")->where.port == 80);
    auto abs = resolve_location(base, "https://c.example/q#f");
    REQUIRE(abs);
    CHECK(abs->where.https);
    CHECK(abs->target == "/q");
    CHECK_FALSE(resolve_location(base, ""));
    CHECK_FALSE(resolve_location(base, "/a b"));
}

}  // namespace unit_test_client_url

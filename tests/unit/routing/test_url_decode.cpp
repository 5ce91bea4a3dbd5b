// Percent-decoding and query-string splitting.

#include "routing/url_decode.hpp"

#include <catch2/catch.hpp>

#include <string>
#include <utility>
#include <vector>

namespace unit_test_routing_url_decode {

using tern::detail::url_decode;

TEST_CASE("percent escapes decode, in either case", "[url]") {
    std::string out;
    url_decode("a%20b%2fc%2F", out, false);
    CHECK(out == "a b/c/");
}

TEST_CASE("plus is a space only in query strings", "[url]") {
    std::string out;
    url_decode("a+b", out, true);
    CHECK(out == "a b");
    url_decode("a+b", out, false);
    CHECK(out == "a+b");
}

TEST_CASE("a malformed escape is kept as written", "[url]") {
    std::string out;
    url_decode("100%", out, false);
    CHECK(out == "100%");
    url_decode("%zz%4", out, false);
    CHECK(out == "%zz%4");
}

TEST_CASE("query pairs are split on & and =, empty pairs skipped", "[url]") {
    std::vector<std::pair<std::string, std::string>> pairs;
    tern::detail::for_each_query_pair("a=1&&b&c=x=y&=v", [&](auto k, auto v) {
        pairs.emplace_back(std::string(k), std::string(v));
    });
    REQUIRE(pairs.size() == 4);
    CHECK(pairs[0] == std::pair<std::string, std::string>{"a", "1"});
    CHECK(pairs[1] == std::pair<std::string, std::string>{"b", ""});
    CHECK(pairs[2] == std::pair<std::string, std::string>{"c", "x=y"});
    CHECK(pairs[3] == std::pair<std::string, std::string>{"", "v"});
}

}  // namespace unit_test_routing_url_decode

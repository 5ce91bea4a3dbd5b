// The multipart delimiter search (src/web/linear_search.hpp): the same answers as a plain
// search, in a number of steps linear in the text whatever the pattern. Counted steps, not
// time: a quadratic search fails these checks on any machine.

#include "web/linear_search.hpp"

#include <catch2/catch.hpp>

#include <cstdint>
#include <random>
#include <string>
#include <string_view>

namespace unit_test_web_linear_search {

using tern::detail::linear_searcher;

namespace {

constexpr auto npos = std::string_view::npos;

std::string long_boundary_delimiter() { return "\r\n--" + std::string(70, 'a'); }

}  // namespace

TEST_CASE("linear_searcher finds what string_view::find finds", "[multipart][search]") {
    std::mt19937 rng(13);
    std::uniform_int_distribution<int> letter(0, 2);
    auto random_text = [&](std::size_t n) {
        std::string s;
        for (std::size_t i = 0; i < n; ++i) s += static_cast<char>('a' + letter(rng));
        return s;
    };
    for (int round = 0; round < 2000; ++round) {
        const std::string pattern = random_text(1 + static_cast<std::size_t>(round % 7));
        const std::string text = random_text(static_cast<std::size_t>(round % 60));
        const linear_searcher searcher(pattern);
        for (std::size_t from = 0; from <= text.size() + 1; ++from) {
            INFO("pattern " << pattern << ", text " << text << ", from " << from);
            const std::size_t expected =
                from > text.size() ? npos : std::string_view(text).find(pattern, from);
            REQUIRE(searcher.find(text, from) == expected);
        }
    }
    CHECK(linear_searcher("").find("abc", 1) == 1);
    CHECK(linear_searcher("x").find("", 0) == npos);
}

TEST_CASE("linear_searcher takes at most two steps per byte whatever the pattern",
          "[multipart][search]") {
    const std::size_t n = 2 * 1024 * 1024;
    struct hostile {
        const char* name;
        std::string pattern;
        std::string text;
    };
    std::string near_misses;  // CRLF "--" and 69 of the boundary's 70 bytes, again and again
    while (near_misses.size() < n) near_misses += "\r\n--" + std::string(69, 'a') + "b";
    const hostile cases[] = {
        // Issue 13: Boyer-Moore-Horspool compares ~70 bytes at every position of this one.
        {"70-byte boundary of a's over a's", long_boundary_delimiter(), std::string(n, 'a')},
        {"the boundary's own bytes over a's", std::string(70, 'a') + "b", std::string(n, 'a')},
        {"near-delimiters", long_boundary_delimiter(), near_misses},
        {"CR LF over CR LF", "\r\n--a", std::string(n, '\r')},
    };
    for (const auto& c : cases) {
        INFO(c.name);
        const linear_searcher searcher(c.pattern);
        CHECK(searcher.find(c.text) == npos);
        CHECK(searcher.steps() <= 2 * c.text.size());
    }
}

TEST_CASE("linear_searcher stays linear over many finds from moving offsets",
          "[multipart][search]") {
    // As parse_multipart uses it: each find starts after the previous match.
    const std::string delimiter = long_boundary_delimiter();
    std::string text;
    for (int i = 0; i < 1000; ++i) text += std::string(1000, 'a') + delimiter;
    const linear_searcher searcher(delimiter);
    std::size_t from = 0;
    int found = 0;
    for (std::size_t at; (at = searcher.find(text, from)) != npos; from = at + delimiter.size()) {
        ++found;
    }
    CHECK(found == 1000);
    CHECK(searcher.steps() <= 2 * text.size());
}

}  // namespace unit_test_web_linear_search

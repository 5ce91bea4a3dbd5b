// The pre-scan body_as runs before parsing (src/web/json_depth.hpp): nesting outside strings
// counted as a JSON parser would, so a deep body is refused before any tree is built.

#include "web/json_depth.hpp"

#include <tern/json.hpp>

#include <algorithm>
#include <catch2/catch.hpp>
#include <string>
#include <vector>

namespace unit_test_web_json_depth {

using tern::detail::json_depth_within;

namespace {

// The deepest nesting nlohmann_json reports for `text` through its parser callback, for
// valid JSON: the reference the scan must agree with.
std::size_t parsed_depth(const std::string& text) {
    std::size_t deepest = 0;
    const auto doc =
        tern::json::parse(text, [&](int depth, tern::json::parse_event_t event, tern::json&) {
            if (event == tern::json::parse_event_t::object_start ||
                event == tern::json::parse_event_t::array_start) {
                deepest = std::max(deepest, static_cast<std::size_t>(depth) + 1);
            }
            return true;
        });
    (void)doc;
    return deepest;
}

// The smallest limit the scan accepts `text` under.
std::size_t scanned_depth(const std::string& text) {
    std::size_t limit = 0;
    while (!json_depth_within(text, limit)) ++limit;
    return limit;
}

}  // namespace

TEST_CASE("json_depth_within counts nested arrays and objects as the parser does", "[json]") {
    for (const std::string& text : std::vector<std::string>{
             "1",
             "\"x\"",
             "[]",
             "{}",
             "[[],[[]],{}]",
             R"({"a":{"b":[1,{"c":[]}]}})",
             R"(["[[[", "{{{", "\"[", "\\", "\\\"]]"])",
             R"({"[":"]", "k\"{":[["\u005b"]]})",
             "[" + std::string(300, ' ') + "[ ] ]",
         }) {
        INFO(text);
        CHECK(scanned_depth(text) == parsed_depth(text));
    }
}

TEST_CASE("json_depth_within refuses one level past the limit and stops there", "[json]") {
    const std::string deep = std::string(1000, '[') + std::string(1000, ']');
    CHECK(json_depth_within(deep, 1000));
    CHECK_FALSE(json_depth_within(deep, 999));
    // Closing brackets between do not let depth build up past the limit.
    std::string siblings;
    for (int i = 0; i < 1000; ++i) siblings += "[[]],";
    siblings = "[" + siblings + "[]]";
    CHECK(json_depth_within(siblings, 3));
    CHECK_FALSE(json_depth_within(siblings, 2));
}

TEST_CASE("json_depth_within on malformed text never allows more than a parser reads", "[json]") {
    // Unterminated string: whatever follows is string text to both.
    CHECK(json_depth_within("[\"" + std::string(100, '['), 1));
    // An escape at the very end, stray closers, and a string escape before the quote.
    CHECK(json_depth_within("[\"\\", 1));
    CHECK(json_depth_within("]]]]}}}[", 1));
    CHECK_FALSE(json_depth_within("]]]][[", 1));
    CHECK_FALSE(json_depth_within(R"(["\\"[[)", 2));
    CHECK(json_depth_within(R"(["\"[[)", 1));
}

}  // namespace unit_test_web_json_depth

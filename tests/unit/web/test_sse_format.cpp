// The text/event-stream format (src/web/sse_format.hpp) as bytes: data lines split at every
// line break, and the fields that may not carry one.

#include "web/sse_format.hpp"

#include <catch2/catch.hpp>

#include <chrono>
#include <string>
#include <string_view>

namespace unit_test_web_sse_format {

using namespace tern::detail;
using namespace std::chrono_literals;

TEST_CASE("SSE events split data lines at CR, LF and CRLF", "[sse]") {
    std::string out;
    append_sse_event(out, "a\nb\r\nc\rd", "kind", "9");
    CHECK(out == "event: kind\nid: 9\ndata: a\ndata: b\ndata: c\ndata: d\n\n");
    out.clear();
    append_sse_event(out, "ends with a break\n", {}, {});
    CHECK(out == "data: ends with a break\ndata: \n\n");  // the browser gets the text back
    out.clear();
    append_sse_event(out, "", {}, {});
    CHECK(out == "data: \n\n");
    out.clear();
    append_sse_comment(out, "two\nlines");
    append_sse_retry(out, 1500ms);
    CHECK(out == ": two\n: lines\n\nretry: 1500\n\n");
}

TEST_CASE("SSE event types and ids may not carry line breaks", "[sse]") {
    CHECK(sse_field_ok("update", false));
    CHECK_FALSE(sse_field_ok("a\rb", false));
    CHECK_FALSE(sse_field_ok("a\nb", true));
    CHECK(sse_field_ok(std::string_view("a\0b", 3), false));
    CHECK_FALSE(sse_field_ok(std::string_view("a\0b", 3), true));
}

}  // namespace unit_test_web_sse_format

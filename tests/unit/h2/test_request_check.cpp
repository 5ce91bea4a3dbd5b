// What makes an HTTP/2 request malformed (src/h2/request_check.hpp, RFC 9113 8.1.1, 8.2,
// 8.3), field by field: the rules nghttp2 applied before tern framed HTTP/2 itself. The
// connection resets such a stream with PROTOCOL_ERROR (tests/unit/h2/test_mapping.cpp).

#include <catch2/catch.hpp>

#include "h2/request_check.hpp"

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace unit_test_h2_request_check {

using tern::h2::request_check;
using field = std::pair<std::string_view, std::string_view>;

// Whether a head of `fields` (END_STREAM with it when `ended`) is well formed.
bool head_ok(const std::vector<field>& fields, bool ended = true) {
    request_check c;
    c.begin(false);
    for (const auto& [name, value] : fields) {
        if (!c.field(name, value)) return false;
    }
    return c.head_done(ended);
}

const std::vector<field> get = {
    {":method", "GET"}, {":scheme", "https"}, {":authority", "a.test"}, {":path", "/"}};

std::vector<field> with(std::vector<field> fields, field extra) {
    fields.push_back(extra);
    return fields;
}

TEST_CASE("h2 requests: a GET with the four pseudo-fields and regular fields is well formed",
          "[h2check]") {
    CHECK(head_ok(get));
    CHECK(head_ok(with(get, {"accept", "*/*"})));
    CHECK(head_ok(with(get, {"te", "trailers"})));
    CHECK(head_ok(with(get, {"te", "Trailers"})));
    CHECK(head_ok(with(get, {"x-empty", ""})));
    CHECK(head_ok(with(get, {"x-inner", "a b\tc"})));
    CHECK(head_ok({{":method", "CONNECT"}, {":authority", "a.test:443"}}));
    CHECK(head_ok({{":method", "OPTIONS"}, {":scheme", "https"}, {":path", "*"}}));
}

TEST_CASE("h2 requests: pseudo-fields missing, repeated, unknown, late or empty are malformed",
          "[h2check]") {
    CHECK_FALSE(head_ok({{":scheme", "https"}, {":path", "/"}}));
    CHECK_FALSE(head_ok({{":method", "GET"}, {":path", "/"}}));
    CHECK_FALSE(head_ok({{":method", "GET"}, {":scheme", "https"}}));
    CHECK_FALSE(head_ok({{":method", "GET"}, {":scheme", "https"}, {":path", ""}}));
    CHECK_FALSE(head_ok(with(get, {":path", "/again"})));
    CHECK_FALSE(head_ok(with(get, {":status", "200"})));
    CHECK_FALSE(head_ok(with(get, {":protocol", "websocket"})));
    CHECK_FALSE(
        head_ok({{":method", "GET"}, {"accept", "*/*"}, {":scheme", "https"}, {":path", "/"}}));
    CHECK_FALSE(head_ok({{":method", "GET"}, {":scheme", "https"}, {":path", "*"}}));
    CHECK_FALSE(head_ok({{":method", "CONNECT"}, {":authority", "a"}, {":path", "/"}}));
    CHECK_FALSE(head_ok({{":method", "G T"}, {":scheme", "https"}, {":path", "/"}}));
}

TEST_CASE("h2 requests: names upper-case or not tokens, values with CR, LF, NUL or edge spaces",
          "[h2check]") {
    CHECK_FALSE(head_ok(with(get, {"X-Upper", "1"})));
    CHECK_FALSE(head_ok(with(get, {"x y", "1"})));
    CHECK_FALSE(head_ok(with(get, {"", "1"})));
    CHECK_FALSE(head_ok(with(get, {"x-crlf", "a\r\nb"})));
    CHECK_FALSE(head_ok(with(get, {"x-nul", std::string_view("a\0b", 3)})));
    CHECK_FALSE(head_ok(with(get, {"x-lead", " a"})));
    CHECK_FALSE(head_ok(with(get, {"x-trail", "a\t"})));
    CHECK_FALSE(head_ok(with(get, {"x-del", "a\x7f"})));
}

TEST_CASE(
    "h2 requests: every byte at every place of a value is refused exactly when it is a "
    "control but HTAB, or DEL",
    "[h2check]") {
    // Values of 1 to 20 bytes (the check reads eight at a time), every byte value at every
    // place but the ends (where a space or HTAB is refused for another reason).
    for (std::size_t length = 3; length <= 20; ++length) {
        for (std::size_t at = 1; at + 1 < length; ++at) {
            for (unsigned b = 0; b < 256; ++b) {
                std::string value(length, 'a');
                value[at] = static_cast<char>(b);
                const bool refused = (b < 0x20 && b != '\t') || b == 0x7f;
                INFO("length " << length << ", byte " << b << " at " << at);
                CHECK(head_ok(with(get, {"x-v", value})) == !refused);
            }
        }
    }
}

TEST_CASE("h2 requests: every byte of a name is refused unless it is a lower-case tchar",
          "[h2check]") {
    const std::string_view tchar_specials = "!#$%&'*+-.^_`|~";
    for (unsigned b = 0; b < 256; ++b) {
        std::string name = "x-";
        name.push_back(static_cast<char>(b));
        const bool ok =
            (b >= 'a' && b <= 'z') || (b >= '0' && b <= '9') ||
            (b != 0 && tchar_specials.find(static_cast<char>(b)) != std::string_view::npos);
        INFO("byte " << b);
        CHECK(head_ok(with(get, {name, "1"})) == ok);
    }
}

TEST_CASE("h2 requests: connection-specific fields and te other than trailers are malformed",
          "[h2check]") {
    for (const std::string_view name :
         {"connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade"}) {
        CHECK_FALSE(head_ok(with(get, {name, "x"})));
    }
    CHECK_FALSE(head_ok(with(get, {"te", "gzip"})));
}

TEST_CASE("h2 requests: the body must be as long as its content-length", "[h2check]") {
    request_check c;
    c.begin(false);
    for (const auto& [n, v] : with(get, {"content-length", "10"})) REQUIRE(c.field(n, v));
    CHECK_FALSE(c.head_done(true));  // declared 10, ended with the head
    REQUIRE(c.head_done(false));
    CHECK(c.data(4));
    CHECK_FALSE(c.ended());  // 4 of 10
    CHECK(c.data(6));
    CHECK(c.ended());
    CHECK_FALSE(c.data(1));  // 11 of 10

    request_check d;
    d.begin(false);
    for (const auto& [n, v] : with(with(get, {"content-length", "3"}), {"content-length", "4"})) {
        if (!d.field(n, v)) {
            SUCCEED("two different lengths are malformed");
            return;
        }
    }
    FAIL("two different content-lengths were taken");
}

TEST_CASE("h2 requests: trailers carry no pseudo-field and end a body of its declared length",
          "[h2check]") {
    request_check c;
    c.begin(false);
    for (const auto& [n, v] : with(get, {"content-length", "2"})) REQUIRE(c.field(n, v));
    REQUIRE(c.head_done(false));
    REQUIRE(c.data(2));
    c.begin(true);
    CHECK(c.field("x-sum", "1"));
    CHECK_FALSE(c.field(":path", "/"));
    CHECK(c.ended());
}

}  // namespace unit_test_h2_request_check

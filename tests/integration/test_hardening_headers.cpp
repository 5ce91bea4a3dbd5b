// Hardening matrix, header fields and Host (RFC 9112 §5, §3.2; RFC 9110 §5.5): every
// malformed field gets 400 with `Connection: close`, the server closes, and a fresh client is
// still served. Valid edge forms (obs-text, surrounding whitespace, empty values, an empty
// Host) are served and the connection stays usable; values reach the handler trimmed.

#include <catch2/catch.hpp>
#include <string>
#include <string_view>

#include "support/raw_client.hpp"
#include "support/test_server.hpp"

namespace wire_test_hardening_headers {

using namespace tern_test;
using namespace std::string_literals;

namespace {

/// A request case that must be served: the bytes and the body the handler answers.
struct served_case {
    std::string_view name;
    std::string bytes;
    std::string body;
};

void routes(tern::app& app) {
    app.get("/", [](tern::context& ctx) { ctx.text("root"); });
    // Echoes the X-V header between brackets, so whitespace trimming shows.
    app.get("/h", [](tern::context& ctx) {
        const auto v = ctx.header("X-V");
        ctx.text(v ? "[" + std::string(*v) + "]" : "<none>");
    });
}

/// "GET / HTTP/1.1" with Host, then `fields` (each with its CRLF), then the empty line.
std::string with_fields(std::string_view fields) {
    return "GET / HTTP/1.1\r\nHost: x\r\n" + std::string(fields) + "\r\n";
}

/// "GET /h HTTP/1.1" with Host and `fields`, for the echo route.
std::string echo_with(std::string_view fields) {
    return "GET /h HTTP/1.1\r\nHost: x\r\n" + std::string(fields) + "\r\n";
}

/// Sends `c.bytes` and expects 200 with `c.body` on a connection that stays usable.
void expect_served(const test_server& server, const served_case& c) {
    INFO("case: " << c.name);
    raw_client client = server.client();
    client.send(c.bytes);
    const response r = client.read_response();
    INFO("request: " << c.bytes);
    INFO("response: " << describe(r));
    CHECK(r.status == 200);
    CHECK(r.body == c.body);
    check_common_headers(r);
    CHECK_FALSE(has_token(r.header("Connection").value_or(""), "close"));
    client.send(get_request(alive_path));
    const response again = client.read_response();
    INFO("follow-up: " << describe(again));
    CHECK(again.status == 200);
    CHECK(again.body == "alive");
}

}  // namespace

TEST_CASE("a malformed header field gets 400 and the connection closes",
          "[wire][hardening][headers]") {
    const wire_case c = GENERATE(values<wire_case>({
        {"bare CR in a value", with_fields("X-V: a\rb\r\n"), 400},
        {"CR CR LF ending a field", with_fields("X-V: a\r\r\n"), 400},
        {"bare LF line endings everywhere", "GET / HTTP/1.1\nHost: x\nX-V: a\n\n", 400},
        {"bare LF ending one field", "GET / HTTP/1.1\r\nHost: x\nX-V: a\r\n\r\n", 400},
        {"bare LF as the empty line", "GET / HTTP/1.1\r\nHost: x\r\n\n", 400},
        {"obs-fold with SP", with_fields("X-V: a\r\n b\r\n"), 400},
        {"obs-fold with HTAB", with_fields("X-V: a\r\n\tb\r\n"), 400},
        {"whitespace before the first field", "GET / HTTP/1.1\r\n Host: x\r\n\r\n", 400},
        {"space before the colon", with_fields("X-V : a\r\n"), 400},
        {"tab before the colon", with_fields("X-V\t: a\r\n"), 400},
        {"space inside the name", with_fields("X V: a\r\n"), 400},
        {"tab inside the name", with_fields("X\tV: a\r\n"), 400},
        {"empty name", with_fields(": v\r\n"), 400},
        {"separator in the name", with_fields("X(V): a\r\n"), 400},
        {"slash in the name", with_fields("X/V: a\r\n"), 400},
        {"semicolon in the name", with_fields("X-V;: a\r\n"), 400},
        {"NUL in the name", with_fields("X\0V: a\r\n"s), 400},
        {"obs-text in the name", with_fields("X\x80V: a\r\n"), 400},
        {"NUL in the value", with_fields("X-V: a\0b\r\n"s), 400},
        {"DEL in the value", with_fields("X-V: a\177b\r\n"), 400},
        {"SOH in the value", with_fields("X-V: a\001b\r\n"), 400},
        {"ESC in the value", with_fields("X-V: a\033b\r\n"), 400},
        {"a line without a colon", with_fields("NoColonHere\r\n"), 400},
        {"a name without a colon or value", with_fields("X-V\r\n"), 400},
        // The llhttp 8.x bug: CR then a byte that is not LF after the header block.
        {"CR then X after the header block", "GET / HTTP/1.1\r\nHost: x\r\n\r\rX", 400},
        {"Expect other than 100-continue", with_fields("Expect: foo\r\n"), 417},
    }));
    test_server server(routes);
    expect_case(server, c);
}

TEST_CASE("valid header edge forms are served and values reach the handler trimmed",
          "[wire][hardening][headers]") {
    const served_case c = GENERATE(values<served_case>({
        // RFC 9110 §5.5: obs-text (0x80-0xFF) is allowed in field values.
        {"obs-text in a value", echo_with("X-V: caf\xe9 \x80\xff\r\n"), "[caf\xe9 \x80\xff]"},
        {"trailing spaces and tabs", echo_with("X-V: trimmed  \t \r\n"), "[trimmed]"},
        {"leading tab and spaces", echo_with("X-V:\t  both\t \r\n"), "[both]"},
        {"no space after the colon", echo_with("X-V:tight\r\n"), "[tight]"},
        {"a tab inside a value is kept", echo_with("X-V: a\tb\r\n"), "[a\tb]"},
        {"an empty value", echo_with("X-V:\r\n"), "[]"},
        {"a value of only whitespace", echo_with("X-V: \t \r\n"), "[]"},
        {"quotes and backslashes", echo_with("X-V: \"q\\\"\"\r\n"), "[\"q\\\"\"]"},
        {"a case-insensitive name", echo_with("x-v: lower\r\n"), "[lower]"},
        {"one empty line before the request", "\r\n" + with_fields(""), "root"},
        {"Expect: 100-continue without a body", with_fields("Expect: 100-continue\r\n"), "root"},
    }));
    test_server server(routes);
    expect_served(server, c);
}

// ---- Host (RFC 9112 §3.2) -----------------------------------------------------------------

TEST_CASE("a missing or repeated Host gets 400 and the connection closes",
          "[wire][hardening][headers][host]") {
    const wire_case c = GENERATE(values<wire_case>({
        {"no Host on HTTP/1.1", "GET / HTTP/1.1\r\n\r\n", 400},
        {"no Host, other fields present", "GET / HTTP/1.1\r\nX-V: a\r\n\r\n", 400},
        {"two identical Hosts", "GET / HTTP/1.1\r\nHost: a\r\nHost: a\r\n\r\n", 400},
        {"two different Hosts", "GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400},
        {"Host and host", "GET / HTTP/1.1\r\nHost: a\r\nhost: a\r\n\r\n", 400},
        {"an empty and a full Host", "GET / HTTP/1.1\r\nHost:\r\nHost: a\r\n\r\n", 400},
        {"two Hosts on HTTP/1.0", "GET / HTTP/1.0\r\nHost: a\r\nHost: b\r\n\r\n", 400},
    }));
    test_server server(routes);
    expect_case(server, c);
}

TEST_CASE("an empty Host with an origin-form target is served",
          "[wire][hardening][headers][host]") {
    // RFC 9112 §3.2: a target URI without an authority is sent with an empty Host.
    test_server server(routes);
    expect_served(server, {"empty Host", "GET / HTTP/1.1\r\nHost:\r\n\r\n", "root"});
}

TEST_CASE("an HTTP/1.0 request without Host is served and then closed",
          "[wire][hardening][headers][host]") {
    test_server server(routes);
    raw_client c = server.client();
    c.send("GET / HTTP/1.0\r\n\r\n");
    const response r = c.read_response();
    INFO(describe(r));
    CHECK(r.status == 200);
    CHECK(r.body == "root");
    check_common_headers(r);
    check_closed_and_still_serving(c, r, server.port());
}

// RFC 9112 3.2: 400 for "a Host header field with an invalid field value".
TEST_CASE("a Host value that is not a valid authority gets 400",
          "[wire][hardening][headers][host]") {
    const wire_case c = GENERATE(values<wire_case>({
        {"space inside Host", "GET / HTTP/1.1\r\nHost: a b\r\n\r\n", 400},
        {"a list in Host", "GET / HTTP/1.1\r\nHost: a, b\r\n\r\n", 400},
    }));
    test_server server(routes);
    expect_case(server, c);
}

}  // namespace wire_test_hardening_headers

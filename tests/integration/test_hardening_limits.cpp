// Hardening matrix, limits just under and just over (docs/limits.md), with small limits:
// max_line_size 64, max_header_size 256, max_header_count 5, max_body_size 16,
// max_empty_lines 2. At the limit a request is served on a usable connection; one over gets
// the documented status (414, 431, 413, 400) with `Connection: close`, then the close.
//
// How the sizes are counted (docs/limits.md): the request line is method SP target SP
// version, without its CRLF; the header block is every raw byte after the version, from the
// CRLF ending the request line through the empty line's CRLF, however the bytes arrive.

#include <catch2/catch.hpp>
#include <string>
#include <string_view>

#include "support/raw_client.hpp"
#include "support/test_server.hpp"

namespace wire_test_hardening_limits {

using namespace tern_test;

namespace {

constexpr std::size_t line_limit = 64;
constexpr std::size_t header_limit = 256;
constexpr std::size_t count_limit = 5;
constexpr std::size_t body_limit = 16;

tern::config small_limits() {
    tern::config cfg = test_config();
    cfg.limits.max_line_size = line_limit;
    cfg.limits.max_header_size = header_limit;
    cfg.limits.max_header_count = count_limit;
    cfg.limits.max_body_size = body_limit;
    cfg.limits.max_empty_lines = 2;
    return cfg;
}

void routes(tern::app& app) {
    app.get("/", [](tern::context& ctx) { ctx.text("root"); });
    app.get("/l/<rest>", [](tern::context& ctx) { ctx.text("long"); });
    app.post("/echo", [](tern::context& ctx) { ctx.result(std::string(ctx.body())); });
}

/// A GET whose request line ("GET /l/aaa HTTP/1.1", no CRLF) is exactly `size` bytes.
std::string line_of(std::size_t size) {
    const std::size_t fixed = std::string_view("GET /l/ HTTP/1.1").size();
    return "GET /l/" + std::string(size - fixed, 'a') + " HTTP/1.1\r\nHost: x\r\n\r\n";
}

/// A GET whose header block, counted from the end of "HTTP/1.1" through the final CRLF CRLF,
/// is exactly `size` bytes: Host, then one X-P field padded to fit.
std::string headers_of(std::size_t size) {
    const std::size_t fixed = std::string_view("\r\nHost: x\r\nX-P: \r\n\r\n").size();
    return "GET / HTTP/1.1\r\nHost: x\r\nX-P: " + std::string(size - fixed, 'p') + "\r\n\r\n";
}

/// A GET with `n` header fields in all: Host first, then X-1 .. X-(n-1).
std::string fields(std::size_t n) {
    std::string out = "GET / HTTP/1.1\r\nHost: x\r\n";
    for (std::size_t i = 1; i < n; ++i) out += "X-" + std::to_string(i) + ": v\r\n";
    return out + "\r\n";
}

/// Sends `bytes` in one write, or one byte per write when `trickle` (so limits counted as
/// bytes arrive see every prefix), or all but the last `hold_back` bytes and then the rest.
void send_bytes(raw_client& c, std::string_view bytes, bool trickle = false,
                std::size_t hold_back = 0) {
    if (trickle) {
        for (char b : bytes) c.send(std::string_view(&b, 1));
    } else if (hold_back > 0) {
        c.send(bytes.substr(0, bytes.size() - hold_back));
        c.send(bytes.substr(bytes.size() - hold_back));
    } else {
        c.send(bytes);
    }
}

/// Expects `status` and `body` on a connection that stays usable.
void expect_served(const test_server& server, std::string_view bytes, std::string_view body,
                   bool trickle = false, std::size_t hold_back = 0) {
    raw_client c = server.client();
    send_bytes(c, bytes, trickle, hold_back);
    const response r = c.read_response();
    INFO("request: " << bytes);
    INFO("response: " << describe(r));
    CHECK(r.status == 200);
    CHECK(r.body == body);
    check_common_headers(r);
    c.send(get_request(alive_path));
    CHECK(c.read_response().body == "alive");
}

/// Expects `status`, `Connection: close`, the close, and a server still serving.
void expect_refused(const test_server& server, std::string_view bytes, int status,
                    bool trickle = false, std::size_t hold_back = 0) {
    raw_client c = server.client();
    send_bytes(c, bytes, trickle, hold_back);
    const response r = c.read_response();
    INFO("request: " << bytes);
    INFO("response: " << describe(r));
    CHECK(r.status == status);
    check_common_headers(r);
    check_closed_and_still_serving(c, r, server.port());
}

}  // namespace

TEST_CASE("a request line at max_line_size is served and one byte over gets 414",
          "[wire][hardening][limits]") {
    test_server server(routes, small_limits());
    REQUIRE(line_of(line_limit).find("\r\n") == line_limit);
    SECTION("at the limit") { expect_served(server, line_of(line_limit), "long"); }
    SECTION("at the limit, one byte per write") {
        expect_served(server, line_of(line_limit), "long", true);
    }
    SECTION("one over") { expect_refused(server, line_of(line_limit + 1), 414); }
    SECTION("one over, one byte per write") {
        expect_refused(server, line_of(line_limit + 1), 414, true);
    }
    SECTION("one over, before the line ends") {
        const std::string line = line_of(line_limit + 1);
        expect_refused(server, std::string_view(line).substr(0, line_limit + 1), 414);
    }
}

TEST_CASE("a header block at max_header_size is served and far over gets 431",
          "[wire][hardening][limits]") {
    test_server server(routes, small_limits());
    REQUIRE(headers_of(header_limit).size() ==
            std::string_view("GET / HTTP/1.1").size() + header_limit);
    SECTION("at the limit") { expect_served(server, headers_of(header_limit), "root"); }
    SECTION("at the limit, one byte per write") {
        expect_served(server, headers_of(header_limit), "root", true);
    }
    SECTION("five over") { expect_refused(server, headers_of(header_limit + 5), 431); }
    SECTION("one long value, before the block ends") {
        expect_refused(server, "GET / HTTP/1.1\r\nHost: x\r\nX-Long: " + std::string(300, 'v'),
                       431);
    }
    SECTION("one long name") {
        expect_refused(
            server, "GET / HTTP/1.1\r\nHost: x\r\nX-" + std::string(300, 'n') + ": v\r\n\r\n", 431);
    }
    SECTION("two fields that only together exceed it") {
        expect_refused(server,
                       "GET / HTTP/1.1\r\nHost: x\r\nX-A: " + std::string(120, 'a') +
                           "\r\nX-B: " + std::string(120, 'b') + "\r\n\r\n",
                       431);
    }
}

// max_header_size counts from the end of the version to the end of the last field value
// (docs/limits.md): the last field's CRLF and the empty line (4 bytes of headers_of's size)
// are not counted, so the boundary is the same however the bytes arrive.
TEST_CASE("the max_header_size boundary does not depend on how the bytes arrive",
          "[wire][hardening][limits]") {
    test_server server(routes, small_limits());
    const std::string at_limit = headers_of(header_limit + 4);
    const std::string one_over = headers_of(header_limit + 5);
    SECTION("at the limit, one write") { expect_served(server, at_limit, "root"); }
    SECTION("at the limit, one byte per write") { expect_served(server, at_limit, "root", true); }
    SECTION("at the limit, last byte apart") { expect_served(server, at_limit, "root", false, 1); }
    SECTION("one over, one write") { expect_refused(server, one_over, 431); }
    SECTION("one over, one byte per write") { expect_refused(server, one_over, 431, true); }
    SECTION("one over, last byte apart") { expect_refused(server, one_over, 431, false, 1); }
    SECTION("one over, last four bytes apart") { expect_refused(server, one_over, 431, false, 4); }
}

TEST_CASE("max_header_count fields are served and one more gets 431", "[wire][hardening][limits]") {
    test_server server(routes, small_limits());
    SECTION("at the limit") { expect_served(server, fields(count_limit), "root"); }
    SECTION("one over") { expect_refused(server, fields(count_limit + 1), 431); }
    SECTION("one over, Host last") {
        std::string bytes = "GET / HTTP/1.1\r\n";
        for (std::size_t i = 1; i <= count_limit; ++i)
            bytes += "X-" + std::to_string(i) + ": v\r\n";
        expect_refused(server, bytes + "Host: x\r\n\r\n", 431);
    }
}

TEST_CASE("a body at max_body_size is served and one byte over gets 413",
          "[wire][hardening][limits]") {
    test_server server(routes, small_limits());
    const std::string at(body_limit, 'b');
    const std::string over(body_limit + 1, 'b');
    SECTION("at the limit") { expect_served(server, body_request("POST", "/echo", at), at); }
    SECTION("one over") { expect_refused(server, body_request("POST", "/echo", over), 413); }
    SECTION("one over, decided before any body byte") {
        expect_refused(server, "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 17\r\n\r\n", 413);
    }
    SECTION("one over with Expect: 100-continue gets no 100 Continue") {
        expect_refused(server,
                       "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 17\r\n"
                       "Expect: 100-continue\r\n\r\n",
                       413);
    }
}

TEST_CASE("max_empty_lines before a request are tolerated and one more gets 400",
          "[wire][hardening][limits]") {
    test_server server(routes, small_limits());
    const std::string request = get_request("/");
    SECTION("two CRLF") { expect_served(server, "\r\n\r\n" + request, "root"); }
    SECTION("two LF") { expect_served(server, "\n\n" + request, "root"); }
    SECTION("CRLF and LF") { expect_served(server, "\r\n\n" + request, "root"); }
    SECTION("three CRLF") { expect_refused(server, "\r\n\r\n\r\n" + request, 400); }
    SECTION("three LF") { expect_refused(server, "\n\n\n" + request, 400); }
    SECTION("three CRLF and nothing else") { expect_refused(server, "\r\n\r\n\r\n", 400); }
    SECTION("counted afresh before each pipelined request") {
        raw_client c = server.client();
        c.send(request + "\r\n\r\n" + request + "\r\n\r\n\r\n" + request);
        CHECK(c.read_response().status == 200);
        CHECK(c.read_response().status == 200);
        const response r = c.read_response();
        CHECK(r.status == 400);
        check_closed_and_still_serving(c, r, server.port());
    }
}

// A method llhttp does not know is refused at its first unknown byte, before the line is
// long enough to count: 501 (unknown method, RFC 9110 9.1), not 414.
TEST_CASE("a made-up method longer than max_line_size gets 501", "[wire][hardening][limits]") {
    test_server server(routes, small_limits());
    expect_refused(server, std::string(line_limit + 16, 'G') + " / HTTP/1.1\r\nHost: x\r\n\r\n",
                   501);
}

}  // namespace wire_test_hardening_limits

// The response parser (the client's side of llhttp), without sockets: bytes in, heads,
// bodies and errors out.

#include "http/response_parser.hpp"

#include <catch2/catch.hpp>

#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace unit_test_http_response_parser {

using tern::detail::response_error;
using tern::detail::response_limits;
using tern::detail::response_parser;
using event = response_parser::event;

namespace {

// What a client reads of one response: the status of every head (interim ones too), the
// body, how reading ended, the bytes it used and whether the connection may be reused.
struct reading {
    std::vector<int> statuses;
    std::string body;
    event end = event::need_more;
    std::size_t consumed = 0;
    bool keep_alive = false;
    response_error error = response_error::none;

    bool operator==(const reading&) const = default;
};

std::ostream& operator<<(std::ostream& os, const reading& r) {
    os << "{statuses:";
    for (const int s : r.statuses) os << ' ' << s;
    return os << ", body: \"" << r.body << "\", end: " << static_cast<int>(r.end)
              << ", consumed: " << r.consumed << ", keep_alive: " << r.keep_alive
              << ", error: " << static_cast<int>(r.error) << '}';
}

// Reads one response from `bytes` as a client does, `step` bytes per read (0: all at once):
// feeding on after each head, stopping at the response's end or an error. With `closed`, the
// peer closes once the bytes run out (finish()).
reading read(response_parser& p, std::string_view bytes, std::size_t step = 0,
             bool closed = false) {
    if (step == 0) step = bytes.empty() ? 1 : bytes.size();
    reading out;
    std::size_t at = 0;
    for (;;) {
        // After a head, the read may be empty: a response without a body ends on it.
        const std::size_t end = std::min(bytes.size(), (at / step + 1) * step);
        const auto r = p.feed(bytes.substr(at, end - at));
        at += r.consumed;
        if (r.what == event::head) {
            out.statuses.push_back(p.head().status);
            continue;
        }
        if (r.what != event::need_more) {
            out.end = r.what;
            break;
        }
        if (at == bytes.size()) {
            out.end = closed ? p.finish().what : event::need_more;
            break;
        }
    }
    // An error's bytes are those of the read it happened in, and the body bytes before it
    // those of the reads before: both depend on the split.
    out.consumed = out.end == event::error ? 0 : at;
    if (out.end != event::error) out.body = p.body();
    out.keep_alive = p.keep_alive();
    out.error = p.error();
    return out;
}

// The same response read in one piece and one byte at a time: the two must agree.
reading read_both_ways(std::string_view bytes, bool head_request = false, bool closed = false,
                       const response_limits& limits = {}) {
    response_parser whole(limits), bytewise(limits);
    whole.expect(head_request);
    bytewise.expect(head_request);
    const reading a = read(whole, bytes, 0, closed);
    const reading b = read(bytewise, bytes, 1, closed);
    CHECK(a == b);
    return a;
}

response_error error_of(std::string_view bytes, const response_limits& limits = {},
                        bool closed = false) {
    const reading r = read_both_ways(bytes, false, closed, limits);
    CHECK(r.end == event::error);
    return r.error;
}

}  // namespace

TEST_CASE("a response with a Content-Length body yields its head and body", "[response]") {
    const std::string head =
        "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nX-Padded:  two words \r\n"
        "Content-Length: 5\r\n\r\n";
    response_parser p(response_limits{});
    auto r = p.feed(head + "hello");
    REQUIRE(r.what == event::head);
    CHECK(r.consumed == head.size());
    const auto& h = p.head();
    CHECK(h.status == 200);
    CHECK(h.reason == "OK");
    CHECK(h.version_major == 1);
    CHECK(h.version_minor == 1);
    REQUIRE(h.headers.size() == 3);
    CHECK(h.headers[0].name == "Content-Type");
    CHECK(h.headers[0].value == "text/plain");
    CHECK(h.headers[1].value == "two words");
    CHECK(p.body().empty());  // the head is reported before any body byte is read

    r = p.feed("hello");
    REQUIRE(r.what == event::complete);
    CHECK(r.consumed == 5);
    CHECK(p.body() == "hello");
    CHECK(p.body_bytes() == 5);
    CHECK(p.keep_alive());
    CHECK(h.headers[2].value == "5");  // the head's views outlive the body
}

TEST_CASE("body bytes the caller took still count in body_bytes", "[response]") {
    response_parser p(response_limits{});
    REQUIRE(p.feed("HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\n").what == event::head);
    REQUIRE(p.feed("abc").what == event::need_more);
    CHECK(p.body() == "abc");
    p.body().clear();
    REQUIRE(p.feed("def").what == event::complete);
    CHECK(p.body() == "def");
    CHECK(p.body_bytes() == 6);
}

TEST_CASE("a chunked body is de-chunked and its trailers are dropped", "[response]") {
    const auto r = read_both_ways(
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nX-Keep: kept\r\n\r\n"
        "5;name=value\r\nhello\r\n6\r\n world\r\n0\r\nX-Trailer: " +
        std::string(300, 't') + "\r\nX-Other: o\r\n\r\n");
    CHECK(r.end == event::complete);
    CHECK(r.body == "hello world");
    CHECK(r.keep_alive);

    response_parser p(response_limits{});
    read(p,
         "HTTP/1.1 200 OK\r\nX-Keep: kept\r\nTransfer-Encoding: chunked\r\n\r\n"
         "3\r\nabc\r\n0\r\nX-Trailer: " +
             std::string(300, 't') + "\r\n\r\n");
    REQUIRE(p.head().headers.size() == 2);
    CHECK(p.head().headers[0].value == "kept");  // trailers did not move the head's storage
    CHECK(p.head().headers[1].name == "Transfer-Encoding");
}

TEST_CASE("chunk extensions over 4 KiB in one response are refused", "[response][limits]") {
    std::string bytes = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n";
    for (int i = 0; i < 5; ++i) bytes += "1;e=" + std::string(1000, 'x') + "\r\na\r\n";
    bytes += "0\r\n\r\n";
    CHECK(error_of(bytes) == response_error::chunk_extension_too_long);

    std::string within = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n";
    for (int i = 0; i < 3; ++i) within += "1;e=" + std::string(1000, 'x') + "\r\na\r\n";
    within += "0\r\n\r\n";
    CHECK(read_both_ways(within).body == "aaa");
}

TEST_CASE("a body without Content-Length or chunked ends at the close", "[response]") {
    const std::string bytes = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nuntil the end";
    response_parser p(response_limits{});
    const auto open = read(p, bytes);
    CHECK(open.end == event::need_more);  // the body goes on until the peer closes
    CHECK(open.body == "until the end");
    CHECK_FALSE(p.keep_alive());

    const auto r = read_both_ways(bytes, false, true);
    CHECK(r.end == event::complete);
    CHECK(r.body == "until the end");
    CHECK_FALSE(r.keep_alive);  // the close ended it, so nothing follows on this connection

    // An HTTP/1.0 response, and one with no body byte at all before the close.
    CHECK(read_both_ways("HTTP/1.0 200 OK\r\n\r\nold", false, true).body == "old");
    const auto empty = read_both_ways("HTTP/1.1 200 OK\r\n\r\n", false, true);
    CHECK(empty.end == event::complete);
    CHECK(empty.body.empty());
}

TEST_CASE("a close inside a head or a framed body is a truncated response", "[response]") {
    const auto closed = [](std::string_view bytes) {
        return error_of(bytes, response_limits{}, true);
    };
    CHECK(closed("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc") == response_error::truncated);
    CHECK(closed("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab") ==
          response_error::truncated);
    CHECK(closed("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n") ==
          response_error::truncated);
    CHECK(closed("HTTP/1.1 200 OK\r\nContent-Le") == response_error::truncated);
    CHECK(closed("HTTP/1.1 100 Continue\r\n\r\n") == response_error::truncated);

    response_parser p(response_limits{});
    p.expect(false);
    CHECK(p.finish().what == event::error);  // closed before the first byte
    CHECK(p.error() == response_error::truncated);
    CHECK(p.feed("HTTP/1.1 200 OK\r\n\r\n").what == event::error);  // errors are final
}

TEST_CASE("interim 1xx heads are reported and the final response follows", "[response]") {
    const std::string bytes =
        "HTTP/1.1 100 Continue\r\n\r\n"
        "HTTP/1.1 103 Early Hints\r\nLink: </style.css>; rel=preload\r\n"
        "Link: </app.js>; rel=preload\r\n\r\n"
        "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";
    const auto r = read_both_ways(bytes);
    CHECK(r.statuses == std::vector<int>{100, 103, 200});
    CHECK(r.end == event::complete);
    CHECK(r.body == "ok");
    CHECK(r.consumed == bytes.size());

    response_parser p(response_limits{});
    auto res = p.feed(bytes);
    REQUIRE(res.what == event::head);
    CHECK(p.head().status == 100);
    CHECK(p.head().reason == "Continue");
    std::string_view rest = std::string_view(bytes).substr(res.consumed);
    res = p.feed(rest);
    REQUIRE(res.what == event::head);
    CHECK(p.head().status == 103);
    REQUIRE(p.head().headers.size() == 2);
    CHECK(p.head().headers[1].value == "</app.js>; rel=preload");
    rest.remove_prefix(res.consumed);
    res = p.feed(rest);
    REQUIRE(res.what == event::head);
    CHECK(p.head().status == 200);
    CHECK(p.head().headers.size() == 1);
}

TEST_CASE("an interim head that says close or is HTTP/1.0 still leads to the final one",
          "[response]") {
    const auto close = read_both_ways(
        "HTTP/1.1 100 Continue\r\nConnection: close\r\n\r\n"
        "HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nx");
    CHECK(close.statuses == std::vector<int>{100, 200});
    CHECK(close.end == event::complete);
    const auto old = read_both_ways(
        "HTTP/1.0 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nx");
    CHECK(old.statuses == std::vector<int>{100, 200});
    CHECK(old.end == event::complete);
}

TEST_CASE("204, 304, 1xx and responses to HEAD have no body whatever their head says",
          "[response]") {
    const std::string next = "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n";
    for (const std::string status : {"204 No Content", "304 Not Modified"}) {
        const std::string head = "HTTP/1.1 " + status + "\r\nContent-Length: 10\r\n\r\n";
        const auto r = read_both_ways(head + next);
        CHECK(r.end == event::complete);
        CHECK(r.body.empty());
        CHECK(r.consumed == head.size());  // the next response is not taken for a body
        CHECK(r.keep_alive);
    }
    const std::string head = "HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n";
    const auto r = read_both_ways(head + next, true);
    CHECK(r.end == event::complete);
    CHECK(r.body.empty());
    CHECK(r.consumed == head.size());
    CHECK(r.keep_alive);

    // The same head to a GET has a body, which has not arrived yet.
    CHECK(read_both_ways(head).end == event::need_more);
    // A HEAD's Content-Length is the GET's size: over max_body_size is no error.
    response_limits small;
    small.max_body_size = 10;
    CHECK(read_both_ways(head, true, false, small).end == event::complete);
    // A 1xx that llhttp would give a body (not 100, 102 or 103) gets none either.
    const auto interim = read_both_ways("HTTP/1.1 199 Odd\r\nContent-Length: 3\r\n\r\n" + next);
    CHECK(interim.statuses == std::vector<int>{199, 200});
    CHECK(interim.end == event::complete);
}

TEST_CASE("finish after a head without a body completes the response", "[response]") {
    response_parser p(response_limits{});
    p.expect(true);
    REQUIRE(p.feed("HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\n").what == event::head);
    CHECK(p.finish().what == event::complete);
    CHECK(p.finish().what == event::complete);
}

TEST_CASE("keep_alive follows the version, Connection and the body's framing", "[response]") {
    const auto keeps = [](std::string_view bytes) {
        const auto r = read_both_ways(bytes, false, true);
        CHECK(r.end == event::complete);
        return r.keep_alive;
    };
    CHECK(keeps("HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nx"));
    CHECK_FALSE(keeps("HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 1\r\n\r\nx"));
    CHECK_FALSE(keeps("HTTP/1.0 200 OK\r\nContent-Length: 1\r\n\r\nx"));
    CHECK(keeps("HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 1\r\n\r\nx"));
    CHECK_FALSE(keeps("HTTP/1.1 200 OK\r\n\r\nx"));  // delimited by the close
    CHECK(keeps("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nx\r\n0\r\n\r\n"));

    response_parser p(response_limits{});
    REQUIRE(p.feed("HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\n").what == event::head);
    CHECK_FALSE(p.keep_alive());  // not before the response is complete
}

TEST_CASE("pipelined responses are read one at a time after expect", "[response]") {
    const std::string first = "HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\none";
    const std::string second =
        "HTTP/1.1 404 Not Found\r\nTransfer-Encoding: chunked\r\n\r\n"
        "3\r\ntwo\r\n0\r\n\r\n";
    const std::string third = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n";
    const std::string bytes = first + second + third;
    for (const std::size_t step : {std::size_t{0}, std::size_t{1}, std::size_t{7}}) {
        response_parser p(response_limits{});
        std::string_view rest = bytes;
        auto r = read(p, rest, step);
        REQUIRE(r.end == event::complete);
        CHECK(r.consumed == first.size());
        CHECK(r.body == "one");
        CHECK(p.feed(rest.substr(r.consumed)).what == event::complete);  // expect() first

        rest.remove_prefix(r.consumed);
        p.expect(false);
        CHECK(p.body().empty());
        r = read(p, rest, step);
        REQUIRE(r.end == event::complete);
        CHECK(r.statuses == std::vector<int>{404});
        CHECK(r.consumed == second.size());
        CHECK(r.body == "two");

        rest.remove_prefix(r.consumed);
        p.expect(true);  // the third answers a HEAD
        r = read(p, rest, step);
        CHECK(r.end == event::complete);
        CHECK(r.consumed == third.size());
        CHECK(r.body.empty());
    }
}

TEST_CASE("empty lines before a status line are skipped and count toward its length",
          "[response][limits]") {
    const auto r = read_both_ways("\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n");
    CHECK(r.end == event::complete);
    response_limits limits;
    limits.max_line_size = 32;
    CHECK(error_of(std::string(40, '\n') + "HTTP/1.1 200 OK\r\n\r\n", limits) ==
          response_error::line_too_long);
    CHECK(error_of(std::string(20, '\n') + "HTTP/1.1 200 Fine and Dandy\r\n\r\n", limits) ==
          response_error::line_too_long);
}

TEST_CASE("a status line over max_line_size is refused", "[response][limits]") {
    response_limits limits;
    limits.max_line_size = 64;
    const std::string at_limit = "HTTP/1.1 200 " + std::string(51, 'r');
    CHECK(read_both_ways(at_limit + "\r\nContent-Length: 0\r\n\r\n", false, false, limits).end ==
          event::complete);
    CHECK(error_of(at_limit + "r\r\n\r\n", limits) == response_error::line_too_long);
    // Without the end of the line in sight.
    CHECK(error_of("HTTP/1.1 200 " + std::string(100, 'r'), limits) ==
          response_error::line_too_long);
}

TEST_CASE("header bytes and fields over the limits are refused", "[response][limits]") {
    response_limits limits;
    limits.max_header_size = 100;
    limits.max_header_count = 3;
    const std::string line = "HTTP/1.1 200 OK";
    // "\r\nA: " + value: 5 + 95 = 100 header bytes.
    CHECK(read_both_ways(line + "\r\nA: " + std::string(95, 'v') + "\r\n\r\n", true, false, limits)
              .end == event::complete);
    CHECK(error_of(line + "\r\nA: " + std::string(96, 'v') + "\r\n\r\n", limits) ==
          response_error::header_too_large);
    CHECK(error_of(line + "\r\nA: " + std::string(200, 'v'), limits) ==
          response_error::header_too_large);
    CHECK(read_both_ways(line + "\r\nA: 1\r\nB: 2\r\nC: 3\r\n\r\n", true, false, limits).end ==
          event::complete);
    CHECK(error_of(line + "\r\nA: 1\r\nB: 2\r\nC: 3\r\nD: 4\r\n\r\n", limits) ==
          response_error::too_many_headers);
    // Trailers count against the same limits.
    const std::string chunked = line + "\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nx\r\n0\r\n";
    CHECK(error_of(chunked + "T: 1\r\nU: 2\r\nV: 3\r\n\r\n", limits) ==
          response_error::too_many_headers);
    CHECK(error_of(chunked + "T: " + std::string(120, 't') + "\r\n\r\n", limits) ==
          response_error::header_too_large);
}

TEST_CASE("a body over max_body_size is refused at the head or as it arrives",
          "[response][limits]") {
    response_limits limits;
    limits.max_body_size = 8;
    response_parser p(limits);
    // A Content-Length over the limit fails before any body byte.
    const auto r = p.feed("HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\n123456789");
    CHECK(r.what == event::error);
    CHECK(p.error() == response_error::body_too_large);
    CHECK(p.body_bytes() == 0);
    CHECK(
        read_both_ways("HTTP/1.1 200 OK\r\nContent-Length: 8\r\n\r\n12345678", false, false, limits)
            .body == "12345678");

    const std::string chunked = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n";
    CHECK(error_of(chunked + "5\r\n12345\r\n4\r\n6789\r\n0\r\n\r\n", limits) ==
          response_error::body_too_large);
    CHECK(error_of("HTTP/1.1 200 OK\r\n\r\n123456789", limits, true) ==
          response_error::body_too_large);

    response_parser q(limits);
    read(q, chunked + "5\r\n12345\r\n9\r\n6789", 1);
    CHECK(q.error() == response_error::body_too_large);
    CHECK(q.body_bytes() <= 8);  // nothing past the limit was appended
    CHECK(q.body().size() <= 8);
}

TEST_CASE("Transfer-Encoding without a final chunked or beside Content-Length is bad framing",
          "[response]") {
    const auto with_te = [](std::string_view te, std::string_view version = "HTTP/1.1") {
        return read_both_ways(std::string(version) + " 200 OK\r\nTransfer-Encoding: " +
                              std::string(te) + "\r\n\r\n1\r\nx\r\n0\r\n\r\n");
    };
    CHECK(with_te("chunked").error == response_error::none);
    const auto coded = with_te("gzip, chunked");  // the body stays gzip-coded for the caller
    CHECK(coded.end == event::complete);
    CHECK(coded.body == "x");
    CHECK(with_te("gzip").error == response_error::bad_framing);
    CHECK(with_te("chunked, gzip").error == response_error::bad_framing);
    CHECK(with_te("chunked, chunked").error == response_error::bad_framing);
    CHECK(with_te("chunked,").error == response_error::bad_framing);
    CHECK(with_te("chunked", "HTTP/1.0").error == response_error::bad_framing);

    CHECK(error_of("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n") ==
          response_error::bad_framing);
    CHECK(error_of("HTTP/1.1 200 OK\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n") ==
          response_error::bad_framing);
    CHECK(error_of("HTTP/1.1 200 OK\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\n") ==
          response_error::bad_framing);
    CHECK(error_of("HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\n") == response_error::bad_framing);
}

TEST_CASE("bytes that are not an HTTP/1.x response are malformed", "[response]") {
    CHECK(error_of("garbage\r\n\r\n") == response_error::malformed);
    CHECK(error_of("HTTP/2.0 200 OK\r\n\r\n") == response_error::malformed);
    CHECK(error_of("HTTP/0.9 200 OK\r\n\r\n") == response_error::malformed);
    CHECK(error_of("HTTP/1.2 200 OK\r\n\r\n") == response_error::malformed);
    CHECK(error_of("HTTP/1.1 20 OK\r\n\r\n") == response_error::malformed);
    CHECK(error_of("HTTP/1.1 099 Low\r\n\r\n") == response_error::malformed);
    CHECK(error_of("HTTP/1.1 200 OK\r\nBad Name: x\r\n\r\n") == response_error::malformed);
    // The client asks for no upgrade.
    CHECK(error_of("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
                   "Connection: upgrade\r\n\r\n") == response_error::malformed);
}

TEST_CASE("expect in the middle of a response fails the parser", "[response]") {
    response_parser p(response_limits{});
    REQUIRE(p.feed("HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nab").what == event::head);
    p.expect(false);
    CHECK(p.error() == response_error::malformed);
    CHECK(p.feed("c").what == event::error);
}

TEST_CASE("describe names each response error in a short phrase", "[response]") {
    CHECK(describe(response_error::header_too_large) == "response header too large");
    CHECK(describe(response_error::body_too_large) == "response body too large");
    CHECK(describe(response_error::truncated) == "connection closed before the response ended");
    for (int e = 0; e <= static_cast<int>(response_error::chunk_extension_too_long); ++e) {
        const auto text = describe(static_cast<response_error>(e));
        CHECK_FALSE(text.empty());
        CHECK(text.find_first_of("ABCDEFGHIJKLMNOPQRSTUVWXYZ") == std::string_view::npos);
    }
}

}  // namespace unit_test_http_response_parser

// The llhttp adapter, without sockets: bytes in, requests and errors out.

#include "http/buffers.hpp"
#include "http/error.hpp"
#include "http/parser.hpp"

#include <catch2/catch.hpp>

#include <string>

namespace unit_test_http_parser {

using tern::detail::error;
using tern::detail::parser_limits;
using tern::detail::request_parser;
using event = request_parser::event;

namespace {

// Feeds `bytes` in one piece, or `step` bytes at a time; returns the last event.
event feed_all(request_parser& p, std::string_view bytes, std::size_t step = 0) {
    if (step == 0) step = bytes.size();
    event last = event::need_more;
    while (!bytes.empty()) {
        const auto piece = bytes.substr(0, step);
        const auto r = p.feed(piece);
        last = r.what;
        if (r.what != event::need_more) return last;
        bytes.remove_prefix(r.consumed);
    }
    return last;
}

error error_of(const request_parser& p) { return static_cast<error>(p.error().value()); }

const std::string simple = "GET /a/b?x=1 HTTP/1.1\r\nHost: h\r\nX-Two:  spaced value \r\n\r\n";

}  // namespace

TEST_CASE("a complete request yields its method, target, path, query and headers", "[parser]") {
    request_parser p(parser_limits{});
    const auto r = p.feed(simple);
    REQUIRE(r.what == event::request);
    CHECK(r.consumed == simple.size());
    auto& req = p.current();
    CHECK(req.method == "GET");
    CHECK(req.target == "/a/b?x=1");
    CHECK(req.path == "/a/b");
    CHECK(req.query == "x=1");
    REQUIRE(req.headers.size() == 2);
    CHECK(req.headers[0].name == "Host");
    CHECK(req.headers[1].value == "spaced value");
    CHECK(req.header("x-two") == std::string_view("spaced value"));
    CHECK(req.keep_alive);
}

TEST_CASE("a request fed one byte at a time parses the same", "[parser]") {
    request_parser p(parser_limits{});
    REQUIRE(feed_all(p, simple, 1) == event::request);
    CHECK(p.current().path == "/a/b");
    CHECK(p.current().headers.size() == 2);
    CHECK(p.current().header("X-Two") == std::string_view("spaced value"));
}

TEST_CASE("pipelined requests stop after each one with the bytes it used", "[parser]") {
    request_parser p(parser_limits{});
    const std::string two = simple + "GET /second HTTP/1.1\r\nHost: h\r\n\r\n";
    auto r = p.feed(two);
    REQUIRE(r.what == event::request);
    CHECK(r.consumed == simple.size());
    CHECK(p.current().path == "/a/b");
    p.next();
    r = p.feed(std::string_view(two).substr(simple.size()));
    REQUIRE(r.what == event::request);
    CHECK(p.current().path == "/second");
}

TEST_CASE("a Content-Length body is collected", "[parser]") {
    request_parser p(parser_limits{});
    REQUIRE(feed_all(p, "PUT / HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\n\r\nhello", 3) ==
            event::request);
    CHECK(p.current().body == "hello");
}

TEST_CASE("a chunked body is de-chunked", "[parser]") {
    request_parser p(parser_limits{});
    const std::string req =
        "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n"
        "3\r\nabc\r\nA\r\n0123456789\r\n0\r\n\r\n";
    REQUIRE(feed_all(p, req, 2) == event::request);
    CHECK(p.current().body == "abc0123456789");
}

TEST_CASE("HTTP/1.0 is not kept alive unless it asks", "[parser]") {
    request_parser plain(parser_limits{});
    REQUIRE(plain.feed("GET / HTTP/1.0\r\n\r\n").what == event::request);
    CHECK_FALSE(plain.current().keep_alive);
    request_parser asks(parser_limits{});
    REQUIRE(asks.feed("GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n").what == event::request);
    CHECK(asks.current().keep_alive);
    CHECK(asks.current().version_minor == 0);
}

TEST_CASE("Connection: close on HTTP/1.1 ends keep-alive", "[parser]") {
    request_parser p(parser_limits{});
    REQUIRE(p.feed("GET / HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n").what ==
            event::request);
    CHECK_FALSE(p.current().keep_alive);
}

TEST_CASE("HEAD is flagged so the writer drops the body", "[parser]") {
    request_parser p(parser_limits{});
    REQUIRE(p.feed("HEAD / HTTP/1.1\r\nHost: h\r\n\r\n").what == event::request);
    CHECK(p.current().is_head);
}

TEST_CASE("the parser reports progress states for the connection's deadlines", "[parser]") {
    request_parser p(parser_limits{});
    CHECK_FALSE(p.in_progress());
    REQUIRE(p.feed("PUT / HTTP/1.1\r\nHo").what == event::need_more);
    CHECK(p.in_progress());
    CHECK_FALSE(p.reading_body());
    REQUIRE(p.feed("st: h\r\nContent-Length: 2\r\n\r\na").what == event::need_more);
    CHECK(p.reading_body());
    REQUIRE(p.feed("b").what == event::request);
    p.next();
    CHECK_FALSE(p.in_progress());
}

TEST_CASE("Expect: 100-continue is owed until body bytes arrive or it is sent", "[parser]") {
    request_parser p(parser_limits{});
    REQUIRE(p.feed("PUT / HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\n")
                .what == event::need_more);
    CHECK(p.wants_continue());
    p.continue_sent();
    CHECK_FALSE(p.wants_continue());

    request_parser eager(parser_limits{});
    REQUIRE(eager
                .feed("PUT / HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\n"
                      "Content-Length: 2\r\n\r\na")
                .what == event::need_more);
    CHECK_FALSE(eager.wants_continue());  // the client did not wait
}

TEST_CASE("an unknown expectation is refused", "[parser]") {
    request_parser p(parser_limits{});
    REQUIRE(
        p.feed("PUT / HTTP/1.1\r\nHost: h\r\nExpect: magic\r\nContent-Length: 1\r\n\r\nx").what ==
        event::error);
    CHECK(error_of(p) == error::unsupported_expectation);
}

TEST_CASE("Host is required once on HTTP/1.1 and optional on HTTP/1.0", "[parser]") {
    request_parser missing(parser_limits{});
    REQUIRE(missing.feed("GET / HTTP/1.1\r\n\r\n").what == event::error);
    CHECK(error_of(missing) == error::missing_host);

    request_parser twice(parser_limits{});
    REQUIRE(twice.feed("GET / HTTP/1.1\r\nHost: a\r\nhost: b\r\n\r\n").what == event::error);
    CHECK(error_of(twice) == error::duplicate_host);

    request_parser old(parser_limits{});
    CHECK(old.feed("GET / HTTP/1.0\r\n\r\n").what == event::request);
}

TEST_CASE("transfer codings other than a final chunked are refused", "[parser]") {
    auto parse = [](const std::string& te, const char* version = "HTTP/1.1") {
        request_parser p(parser_limits{});
        const auto r = p.feed(std::string("POST / ") + version +
                              "\r\nHost: h\r\nTransfer-Encoding: " + te + "\r\n\r\n0\r\n\r\n");
        return r.what == event::error ? error_of(p) : error{};
    };
    CHECK(parse("chunked") == error{});
    CHECK(parse("gzip, chunked") == error::unknown_transfer_coding);
    CHECK(parse("chunked, gzip") == error::bad_transfer_encoding);
    CHECK(parse("gzip") == error::bad_transfer_encoding);
    CHECK(parse("chunked, chunked") == error::bad_transfer_encoding);
    CHECK(parse("chunked", "HTTP/1.0") == error::bad_transfer_encoding);
}

TEST_CASE("framing conflicts are parse errors", "[parser]") {
    auto fails = [](const std::string& head) {
        request_parser p(parser_limits{});
        return p.feed(head).what == event::error;
    };
    CHECK(
        fails("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 1\r\n"
              "Transfer-Encoding: chunked\r\n\r\n"));
    CHECK(fails("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n"));
    CHECK(fails("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 1x\r\n\r\n"));
    CHECK(fails("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n"));
    // llhttp 8.x accepted "\r\n\rX" as the end of the header block; 9.2 strict must not.
    CHECK(fails("GET / HTTP/1.1\r\nHost: h\r\n\rX"));
    CHECK(fails("GET / HTTP/1.1\r\nHost: h\r\nX: a\r\n folded\r\n\r\n"));
    CHECK(fails("GET / HTTP/1.1\nHost: h\n\n"));
}

TEST_CASE("the request line is limited to max_line_size bytes", "[parser][limits]") {
    parser_limits limits;
    limits.max_line_size = 32;
    const std::string at_limit = "GET /" + std::string(32 - 14, 'a') + " HTTP/1.1";
    REQUIRE(at_limit.size() == 32);
    request_parser ok(limits);
    CHECK(ok.feed(at_limit + "\r\nHost: h\r\n\r\n").what == event::request);

    request_parser over(limits);
    CHECK(feed_all(over, "GET /" + std::string(40, 'a') + " HTTP/1.1\r\n", 7) == event::error);
    CHECK(error_of(over) == error::line_too_long);
}

TEST_CASE("header bytes are limited to max_header_size, counted as they arrive",
          "[parser][limits]") {
    parser_limits limits;
    limits.max_header_size = 64;
    request_parser over(limits);
    // Never completes a line: the count must still trip.
    CHECK(feed_all(over, "GET / HTTP/1.1\r\nX: " + std::string(100, 'v'), 5) == event::error);
    CHECK(error_of(over) == error::header_too_large);

    request_parser ok(limits);
    CHECK(ok.feed("GET / HTTP/1.1\r\nHost: h\r\nX: " + std::string(30, 'v') + "\r\n\r\n").what ==
          event::request);
}

TEST_CASE("header fields are limited to max_header_count", "[parser][limits]") {
    parser_limits limits;
    limits.max_header_count = 3;
    request_parser ok(limits);
    CHECK(ok.feed("GET / HTTP/1.1\r\nHost: h\r\nA: 1\r\nB: 2\r\n\r\n").what == event::request);
    request_parser over(limits);
    CHECK(over.feed("GET / HTTP/1.1\r\nHost: h\r\nA: 1\r\nB: 2\r\nC: 3\r\n\r\n").what ==
          event::error);
    CHECK(error_of(over) == error::too_many_headers);
}

TEST_CASE("a body over max_body_size is refused from Content-Length or as it arrives",
          "[parser][limits]") {
    parser_limits limits;
    limits.max_body_size = 4;
    request_parser declared(limits);
    CHECK(declared.feed("PUT / HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\n\r\n").what ==
          event::error);
    CHECK(error_of(declared) == error::body_too_large);

    request_parser chunked(limits);
    CHECK(feed_all(chunked,
                   "PUT / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n"
                   "3\r\nabc\r\n3\r\ndef\r\n0\r\n\r\n") == event::error);
    CHECK(error_of(chunked) == error::body_too_large);

    request_parser exact(limits);
    CHECK(exact.feed("PUT / HTTP/1.1\r\nHost: h\r\nContent-Length: 4\r\n\r\nabcd").what ==
          event::request);
}

TEST_CASE("empty lines before a request are tolerated up to max_empty_lines", "[parser][limits]") {
    parser_limits limits;
    limits.max_empty_lines = 2;
    request_parser ok(limits);
    CHECK(ok.feed("\r\n\r\nGET / HTTP/1.1\r\nHost: h\r\n\r\n").what == event::request);
    request_parser over(limits);
    CHECK(over.feed("\r\n\r\n\r\nGET / HTTP/1.1\r\nHost: h\r\n\r\n").what == event::error);
    CHECK(error_of(over) == error::too_many_empty_lines);
}

TEST_CASE("CONNECT and HTTP/2 are refused with their own errors", "[parser]") {
    request_parser connect(parser_limits{});
    CHECK(connect.feed("CONNECT example.com:443 HTTP/1.1\r\nHost: example.com\r\n\r\n").what ==
          event::error);
    CHECK(error_of(connect) == error::method_not_supported);

    request_parser h2(parser_limits{});
    CHECK(h2.feed("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n").what == event::error);
    CHECK(error_of(h2) == error::version_not_supported);
}

TEST_CASE("after an error the parser never resynchronises", "[parser]") {
    request_parser p(parser_limits{});
    REQUIRE(p.feed("BAD\x01 / HTTP/1.1\r\n\r\n").what == event::error);
    CHECK(p.feed("GET / HTTP/1.1\r\nHost: h\r\n\r\n").what == event::error);
}

TEST_CASE("an Upgrade request on an ordinary route is parsed as plain HTTP", "[parser]") {
    request_parser p(parser_limits{});
    const std::string upgrade =
        "GET /chat HTTP/1.1\r\nHost: h\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n";
    REQUIRE(p.feed(upgrade + "GET /next HTTP/1.1\r\nHost: h\r\n\r\n").what == event::request);
    CHECK(p.current().path == "/chat");
    p.next();
    REQUIRE(p.feed("GET /next HTTP/1.1\r\nHost: h\r\n\r\n").what == event::request);
    CHECK(p.current().path == "/next");
}

TEST_CASE("trailer fields after a chunked body leave the request's header views intact",
          "[parser]") {
    request_parser p(parser_limits{});
    const std::string head =
        "POST /t HTTP/1.1\r\nHost: h\r\nX-Keep: original\r\nTransfer-Encoding: chunked\r\n\r\n";
    // A trailer large enough to force the head's buffer to grow if trailers were stored in it.
    const std::string body = "3\r\nabc\r\n0\r\nX-Trailer: " + std::string(3000, 't') + "\r\n\r\n";
    REQUIRE(p.feed(head).what == event::need_more);
    REQUIRE(feed_all(p, body, 64) == event::request);
    const auto& req = p.current();
    CHECK(req.body == "abc");
    CHECK(req.header("X-Keep") == std::string_view("original"));
    CHECK(req.path == "/t");
    CHECK_FALSE(req.header("X-Trailer").has_value());  // trailers are kept apart from the head
    REQUIRE(req.trailers.size() == 1);
    CHECK(req.trailers[0].name == "X-Trailer");
    CHECK(req.trailers[0].value == std::string(3000, 't'));
}

TEST_CASE("trailer fields are kept in order, values trimmed, whatever the pieces they come in",
          "[parser]") {
    const std::string head = "POST /t HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n";
    const std::string body = "3\r\nabc\r\n0\r\nX-Sum:  12 \r\nEmpty:\r\nx-last:\tz\r\n\r\n";
    for (const std::size_t piece : {std::size_t{1}, std::size_t{5}, body.size()}) {
        INFO("pieces of " << piece);
        request_parser p(parser_limits{});
        REQUIRE(p.feed(head).what == event::need_more);
        REQUIRE(feed_all(p, body, piece) == event::request);
        const auto& req = p.current();
        REQUIRE(req.trailers.size() == 3);
        CHECK(req.trailers[0].name == "X-Sum");
        CHECK(req.trailers[0].value == "12");
        CHECK(req.trailers[1].name == "Empty");
        CHECK(req.trailers[1].value.empty());
        CHECK(req.trailers[2].value == "z");
        CHECK(req.trailer("x-sum") == std::string_view("12"));
        CHECK_FALSE(req.trailer("x-other").has_value());
        // The next request starts without them.
        p.next();
        REQUIRE(p.feed("GET / HTTP/1.1\r\nHost: h\r\n\r\n").what == event::request);
        CHECK(p.current().trailers.empty());
    }
}

TEST_CASE("trailer fields count against max_header_size and max_header_count", "[parser][limits]") {
    parser_limits limits;
    limits.max_header_size = 128;
    limits.max_header_count = 4;
    const std::string head = "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n";

    request_parser big(limits);
    REQUIRE(big.feed(head).what == event::need_more);
    CHECK(feed_all(big, "0\r\nX: " + std::string(200, 'v') + "\r\n\r\n", 16) == event::error);
    CHECK(error_of(big) == error::header_too_large);

    request_parser many(limits);
    REQUIRE(many.feed(head).what == event::need_more);
    CHECK(many.feed("0\r\nA: 1\r\nB: 2\r\nC: 3\r\n\r\n").what == event::error);
    CHECK(error_of(many) == error::too_many_headers);
}

TEST_CASE("chunk extensions are accepted up to 4 KiB per request, then refused",
          "[parser][limits]") {
    const std::string head = "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n";
    request_parser ok(parser_limits{});
    REQUIRE(ok.feed(head).what == event::need_more);
    CHECK(ok.feed("3;name=value;flag\r\nabc\r\n0\r\n\r\n").what == event::request);
    CHECK(ok.current().body == "abc");

    request_parser over(parser_limits{});
    REQUIRE(over.feed(head).what == event::need_more);
    std::string chunks;
    for (int i = 0; i < 100; ++i) chunks += "1;ext=" + std::string(50, 'e') + "\r\nx\r\n";
    CHECK(feed_all(over, chunks + "0\r\n\r\n", 100) == event::error);
    CHECK(error_of(over) == error::chunk_extension_too_long);
}

TEST_CASE("Host values must be a host and optional port (RFC 9112 3.2, RFC 3986 3.2.2)",
          "[parser]") {
    auto status = [](const std::string& host) {
        request_parser p(parser_limits{});
        const auto r = p.feed("GET / HTTP/1.1\r\nHost: " + host + "\r\n\r\n");
        return r.what == event::request ? std::string("ok") : std::string("refused");
    };
    for (const char* good :
         {"example.com", "example.com:8080", "127.0.0.1:80", "[::1]:8080", "[2001:db8::7]",
          "xn--d1acufc.xn--p1ai", "a_b-c~d", "h%41st", "", "localhost:"}) {
        INFO(good);
        CHECK(status(good) == "ok");
    }
    for (const char* bad :
         {"a b", "a/b", "user@host", "host:80x", "host:80:90", "[::1", "::1", "[::1]x", "h\"q",
          "a<b>", "host:-1", "%zz", "h%4", "h%", "caf\xc3\xa9", "a\x7f"}) {
        INFO(bad);
        CHECK(status(bad) == "refused");
    }
}

TEST_CASE("an absolute-form target routes by its path and query", "[parser]") {
    request_parser p(parser_limits{});
    REQUIRE(
        p.feed("GET http://example.com:8080/a/b?q=1 HTTP/1.1\r\nHost: example.com\r\n\r\n").what ==
        event::request);
    CHECK(p.current().path == "/a/b");
    CHECK(p.current().query == "q=1");
    CHECK(p.current().target == "http://example.com:8080/a/b?q=1");

    request_parser bare(parser_limits{});
    REQUIRE(bare.feed("GET HTTPS://example.com HTTP/1.1\r\nHost: example.com\r\n\r\n").what ==
            event::request);
    CHECK(bare.current().path == "/");
}

TEST_CASE("the request line is strict: single spaces, a 1.x version, no fragment", "[parser]") {
    auto outcome = [](const std::string& line) {
        request_parser p(parser_limits{});
        const auto r = p.feed(line + "\r\nHost: h\r\n\r\n");
        if (r.what == event::request) return std::string("ok");
        return std::string(r.what == event::error ? "error " : "more ") +
               std::to_string(tern::detail::status_of(error_of(p)));
    };
    CHECK(outcome("GET / HTTP/1.1") == "ok");
    CHECK(outcome("GET  / HTTP/1.1") == "error 400");
    CHECK(outcome("GET /  HTTP/1.1") == "error 400");
    CHECK(outcome("GET /") == "error 400");  // HTTP/0.9 simple request
    CHECK(outcome("GET /a#frag HTTP/1.1") == "error 400");
    CHECK(outcome("GET * HTTP/1.1") == "error 400");
    CHECK(outcome("OPTIONS * HTTP/1.1") == "ok");
    CHECK(outcome("GET / HTTP/1.2") == "error 505");
    CHECK(outcome("GET / HTTP/9.9") == "error 505");
    CHECK(outcome("GET / HTTP/2.0") == "error 505");
    CHECK(outcome("GET / HTTP/1.10") == "error 400");
    CHECK(outcome("GET / http/1.1") == "error 400");
}

TEST_CASE("an unknown method token is 501, garbage where a method should be is 400", "[parser]") {
    auto status = [](const std::string& request) {
        request_parser p(parser_limits{});
        REQUIRE(p.feed(request).what == event::error);
        return tern::detail::status_of(error_of(p));
    };
    CHECK(status("FOO / HTTP/1.1\r\nHost: h\r\n\r\n") == 501);
    CHECK(status("get / HTTP/1.1\r\nHost: h\r\n\r\n") == 501);
    CHECK(status(" GET / HTTP/1.1\r\nHost: h\r\n\r\n") == 400);
    CHECK(status("\x01\x02 / HTTP/1.1\r\n\r\n") == 400);
}

TEST_CASE("max_header_size has the same boundary whether the head arrives at once or bytewise",
          "[parser][limits]") {
    parser_limits limits;
    limits.max_header_size = 64;
    // Counted: from the end of "HTTP/1.1" to the end of the last value (the request line's
    // CRLF included, the last field's CRLF and the empty line not).
    auto head_with = [](std::size_t counted) {
        const std::string fixed = "\r\nHost: h\r\nX: ";  // 15 counted bytes before the value
        return "GET / HTTP/1.1" + fixed + std::string(counted - fixed.size(), 'v') + "\r\n\r\n";
    };
    for (std::size_t step : {std::size_t{0}, std::size_t{1}, std::size_t{3}}) {
        INFO("step " << step);
        request_parser at_limit(limits);
        CHECK(feed_all(at_limit, head_with(64), step) == event::request);
        request_parser over(limits);
        CHECK(feed_all(over, head_with(65), step) == event::error);
        CHECK(error_of(over) == error::header_too_large);
    }
}

TEST_CASE("a large body is freed once its request is done, small buffers are kept",
          "[parser][memory]") {
    using tern::detail::retained_buffer_capacity;
    request_parser p(parser_limits{});
    const std::string body(1024 * 1024, 'b');
    const std::string big =
        "POST /up HTTP/1.1\r\nHost: h\r\nContent-Length: " + std::to_string(body.size()) +
        "\r\n\r\n" + body;
    REQUIRE(feed_all(p, big) == event::request);
    CHECK(p.current().body.size() == body.size());
    p.next();
    // An idle keep-alive connection must not hold the largest body it ever received.
    CHECK(p.current().body.capacity() <= retained_buffer_capacity);

    const std::string small_body(1000, 's');
    const std::string small =
        "POST /up HTTP/1.1\r\nHost: h\r\nContent-Length: 1000\r\n\r\n" + small_body;
    REQUIRE(feed_all(p, small) == event::request);
    const auto kept = p.current().body.capacity();
    p.next();
    CHECK(p.current().body.capacity() == kept);  // steady traffic does not reallocate
}

TEST_CASE("a Transfer-Encoding with no coding, or with an empty list element, is refused",
          "[parser]") {
    // RFC 9112 6.3: a Transfer-Encoding whose final coding is not chunked leaves the length
    // undetermined (400), with or without Content-Length, on HTTP/1.1 and 1.0 alike.
    auto parse = [](const std::string& fields, const char* version = "HTTP/1.1") {
        request_parser p(parser_limits{});
        const auto r =
            p.feed(std::string("POST / ") + version + "\r\nHost: h\r\n" + fields + "\r\nabc");
        return r.what == event::error ? error_of(p) : error{};
    };
    for (const char* te : {"", " ", "  ", ",", " , ,", ",,", "chunked,", ", chunked", "chunked, ,",
                           "gzip,, chunked"}) {
        INFO("Transfer-Encoding: [" << te << "]");
        const std::string field = std::string("Transfer-Encoding: ") + te + "\r\n";
        CHECK(parse(field) == error::bad_transfer_encoding);
        CHECK(parse(field, "HTTP/1.0") == error::bad_transfer_encoding);
        // With Content-Length, llhttp may see the conflict first (a plain 400 then).
        for (const char* version : {"HTTP/1.1", "HTTP/1.0"}) {
            for (const auto& both :
                 {field + "Content-Length: 3\r\n", "Content-Length: 3\r\n" + field}) {
                const error e = parse(both, version);
                CHECK(e != error{});
                CHECK(tern::detail::status_of(e) == 400);
            }
        }
    }
    CHECK(parse("Transfer-Encoding: chunked\r\nTransfer-Encoding:\r\n") ==
          error::bad_transfer_encoding);
    CHECK(parse("Transfer-Encoding:\r\nTransfer-Encoding: chunked\r\n") ==
          error::bad_transfer_encoding);
}

TEST_CASE("a Content-Length that is empty, blank or a bare list is refused", "[parser]") {
    auto fails = [](const std::string& cl) {
        request_parser p(parser_limits{});
        return p.feed("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: " + cl + "\r\n\r\nabc").what ==
               event::error;
    };
    for (const char* cl : {"", " ", ",", " , ,", "3,", ",3", "3, ,"}) {
        INFO("Content-Length: [" << cl << "]");
        CHECK(fails(cl));
    }
}

TEST_CASE("Expect is a list: empty members are ignored, 100-continue is the only member",
          "[parser]") {
    auto parse = [](const std::string& fields) {
        request_parser p(parser_limits{});
        const auto r =
            p.feed("PUT / HTTP/1.1\r\nHost: h\r\nContent-Length: 2\r\n" + fields + "\r\n");
        if (r.what == event::error) return std::string("error");
        return std::string(p.wants_continue() ? "continue" : "plain");
    };
    CHECK(parse("Expect:\r\n") == "plain");
    CHECK(parse("Expect: \r\n") == "plain");
    CHECK(parse("Expect: ,\r\n") == "plain");
    CHECK(parse("Expect:  , ,\r\n") == "plain");
    CHECK(parse("Expect: 100-continue\r\n") == "continue");
    CHECK(parse("Expect: 100-CONTINUE\r\n") == "continue");
    CHECK(parse("Expect: 100-continue,\r\n") == "continue");
    CHECK(parse("Expect: 100-continue\r\nExpect: 100-continue\r\n") == "continue");
    CHECK(parse("Expect: 100-continue, 100-continue\r\n") == "continue");
    CHECK(parse("Expect:\r\nExpect: 100-continue\r\n") == "continue");
    CHECK(parse("Expect: 100-continue\r\nExpect: magic\r\n") == "error");
    CHECK(parse("Expect: magic\r\nExpect: 100-continue\r\n") == "error");
    CHECK(parse("Expect: 100-continue, magic\r\n") == "error");
    CHECK(parse("Expect: 100-continue;x=1\r\n") == "error");
}

TEST_CASE("Host may be empty or blank but not a list, and only once", "[parser]") {
    auto parse = [](const std::string& fields) {
        request_parser p(parser_limits{});
        return p.feed("GET / HTTP/1.1\r\n" + fields + "\r\n").what == event::error ? error_of(p)
                                                                                   : error{};
    };
    CHECK(parse("Host:\r\n") == error{});
    CHECK(parse("Host:   \r\n") == error{});
    CHECK(parse("Host: ,\r\n") == error::bad_host);
    CHECK(parse("Host:  , ,\r\n") == error::bad_host);
    CHECK(parse("Host: a,b\r\n") == error::bad_host);
    CHECK(parse("Host:\r\nHost:\r\n") == error::duplicate_host);
}

TEST_CASE("Content-Type may appear once", "[parser]") {
    request_parser p(parser_limits{});
    REQUIRE(p.feed("POST / HTTP/1.1\r\nHost: h\r\nContent-Type: text/plain\r\n"
                   "Content-Type: application/x-www-form-urlencoded\r\nContent-Length: 0\r\n\r\n")
                .what == event::error);
    CHECK(error_of(p) == error::duplicate_content_type);
}

TEST_CASE("after a refusal past the request line, the line is kept for the logger", "[parser]") {
    parser_limits limits;
    limits.max_header_count = 2;
    request_parser p(limits);
    REQUIRE(p.feed("HEAD /a?b=1 HTTP/1.0\r\nHost: h\r\nUser-Agent: ua\r\nX: 1\r\n").what ==
            event::error);
    CHECK(error_of(p) == error::too_many_headers);
    const auto& req = p.parsed_so_far();
    CHECK(req.method == "HEAD");
    CHECK(req.target == "/a?b=1");
    CHECK(req.path == "/a");
    CHECK(req.query == "b=1");
    CHECK(req.version_minor == 0);
    CHECK(req.is_head);
    // The fields that arrived whole before the refusal.
    REQUIRE(req.headers.size() == 2);
    CHECK(req.header("user-agent") == std::string_view("ua"));

    request_parser cut(parser_limits{});
    REQUIRE(cut.feed("GET /x HTTP/1.1\r\nHost: h\r\nX-Half: abc").what == event::need_more);
    const auto& partial = cut.parsed_so_far();
    CHECK(partial.method == "GET");
    CHECK(partial.path == "/x");
    CHECK(partial.headers.size() == 1);  // X-Half's value may not be complete

    request_parser line(parser_limits{});
    REQUIRE(line.feed("GET /not-yet-a-whole-li").what == event::need_more);
    CHECK(line.parsed_so_far().method.empty());
}

}  // namespace unit_test_http_parser

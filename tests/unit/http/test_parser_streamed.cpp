// The parser's streamed mode (body_plan::streamed), without sockets: the head alone first,
// then the body a piece per feed, viewing the input; the limit, and what follows the body.

#include "http/error.hpp"
#include "http/parser.hpp"

#include <catch2/catch.hpp>

#include <string>

namespace unit_test_http_parser_streamed {

using tern::detail::body_plan;
using tern::detail::error;
using tern::detail::parser_limits;
using tern::detail::request;
using tern::detail::request_parser;
using event = request_parser::event;

namespace {

// Streams every body, up to `limit` bytes.
class streaming_planner final : public tern::detail::body_planner {
public:
    explicit streaming_planner(std::size_t limit) : limit_(limit) {}
    std::size_t body_limit(const request&) const noexcept override { return limit_; }
    body_plan plan_body(const request&) const noexcept override { return {limit_, true}; }

private:
    std::size_t limit_;
};

parser_limits streaming(const streaming_planner& planner) {
    parser_limits l;
    l.planner = &planner;
    return l;
}

// Feeds `bytes` from the body on; the pieces joined, and the last event.
struct drained {
    std::string body;
    event last = event::need_more;
    std::size_t pieces = 0;
    std::size_t consumed = 0;
};

drained feed_body(request_parser& p, std::string_view bytes) {
    drained d;
    while (!bytes.empty()) {
        const auto r = p.feed(bytes);
        const auto piece = p.piece();
        if (!piece.empty()) {
            // The piece views the input it came from.
            CHECK(piece.data() >= bytes.data());
            CHECK(piece.data() + piece.size() <= bytes.data() + bytes.size());
            d.body.append(piece);
            ++d.pieces;
        }
        d.last = r.what;
        d.consumed += r.consumed;
        bytes.remove_prefix(r.consumed);
        if (r.what == event::request || r.what == event::error) break;
    }
    return d;
}

}  // namespace

TEST_CASE("a streamed request stops after its head, before any body byte", "[parser]") {
    streaming_planner planner(1000);
    request_parser p(streaming(planner));
    const std::string head = "POST /up HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\n\r\n";
    const auto r = p.feed(head + "hello");
    REQUIRE(r.what == event::head);
    CHECK(r.consumed == head.size());
    CHECK(p.streaming());
    CHECK(p.current().path == "/up");
    CHECK(p.current().body.empty());
    CHECK(p.body_left() == 5);
    const auto d = feed_body(p, "hello");
    CHECK(d.last == event::request);
    CHECK(d.body == "hello");
    CHECK(p.current().body.empty());  // handed out, not kept
}

TEST_CASE("a streamed chunked body comes a chunk per feed, and the next request stays",
          "[parser]") {
    streaming_planner planner(1000);
    request_parser p(streaming(planner));
    const std::string head = "POST /up HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n";
    const std::string body = "3\r\nabc\r\n4\r\ndefg\r\n0\r\nX-Sum: 7\r\n\r\n";
    const std::string next = "GET /next HTTP/1.1\r\nHost: h\r\n\r\n";
    const std::string all = head + body + next;
    const auto r = p.feed(all);
    REQUIRE(r.what == event::head);
    CHECK(p.body_left() == -1);
    const auto d = feed_body(p, std::string_view(all).substr(r.consumed));
    CHECK(d.last == event::request);
    CHECK(d.body == "abcdefg");
    CHECK(d.pieces == 2);
    CHECK(d.consumed == body.size());
    CHECK(p.current().trailer("x-sum") == std::string_view("7"));
    p.next();
    const auto n = p.feed(std::string_view(all).substr(r.consumed + d.consumed));
    CHECK(n.what == event::request);
    CHECK(p.current().path == "/next");
}

TEST_CASE("a streamed body fed a byte at a time gives the same bytes", "[parser]") {
    streaming_planner planner(1000);
    request_parser p(streaming(planner));
    const std::string head = "POST /up HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n";
    REQUIRE(p.feed(head).what == event::head);
    const std::string body = "3\r\nabc\r\n4\r\ndefg\r\n0\r\n\r\n";
    std::string got;
    event last = event::need_more;
    for (char c : body) {
        const auto r = p.feed(std::string_view(&c, 1));
        CHECK(r.consumed == 1);
        got.append(p.piece());
        last = r.what;
    }
    CHECK(last == event::request);
    CHECK(got == "abcdefg");
}

TEST_CASE("a streamed chunked body passing its limit fails as too large", "[parser]") {
    streaming_planner planner(5);
    request_parser p(streaming(planner));
    REQUIRE(p.feed("POST /up HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n").what ==
            event::head);
    const auto d = feed_body(p, "3\r\nabc\r\n3\r\ndef\r\n0\r\n\r\n");
    CHECK(d.last == event::error);
    CHECK(d.body == "abc");
    CHECK(static_cast<error>(p.error().value()) == error::body_too_large);
}

TEST_CASE("a streamed request with a Content-Length over its limit is refused at the head",
          "[parser]") {
    streaming_planner planner(5);
    request_parser p(streaming(planner));
    const auto r = p.feed("POST /up HTTP/1.1\r\nHost: h\r\nContent-Length: 6\r\n\r\n");
    CHECK(r.what == event::error);
    CHECK(static_cast<error>(p.error().value()) == error::body_too_large);
}

TEST_CASE("a streamed request counts down what is left of its Content-Length", "[parser]") {
    streaming_planner planner(1000);
    request_parser p(streaming(planner));
    REQUIRE(p.feed("POST /up HTTP/1.1\r\nHost: h\r\nContent-Length: 10\r\n\r\n").what ==
            event::head);
    const auto r = p.feed("abcd");
    CHECK(r.what == event::piece);
    CHECK(p.piece() == "abcd");
    CHECK(p.body_left() == 6);
}

TEST_CASE("a streamed request asking for 100-continue still wants it before its body", "[parser]") {
    streaming_planner planner(1000);
    request_parser p(streaming(planner));
    REQUIRE(p.feed("POST /up HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\nExpect: "
                   "100-continue\r\n\r\n")
                .what == event::head);
    CHECK(p.wants_continue());
}

}  // namespace unit_test_http_parser_streamed

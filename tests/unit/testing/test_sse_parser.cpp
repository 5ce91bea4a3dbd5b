// The test kit's event-stream parser (src/testing/sse_parser.hpp), transport-free: the
// examples and rules of the HTML standard's "Server-sent events" section, with the stream
// fed whole and split at every byte.

#include <catch2/catch.hpp>
#include <tern/testing.hpp>

#include "testing/sse_parser.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace unit_test_testing_sse_parser {

using tern::testing::sse_event;
using tern::testing::detail::sse_parser;

namespace {

std::vector<sse_event> drain(sse_parser& parser) {
    std::vector<sse_event> out;
    while (auto event = parser.next()) out.push_back(std::move(*event));
    return out;
}

// The events of `stream` fed whole, checked to be the same when it is fed a byte at a time.
std::vector<sse_event> parse(std::string_view stream, std::string last_event_id = {}) {
    sse_parser whole(last_event_id);
    whole.feed(stream);
    std::vector<sse_event> events = drain(whole);
    sse_parser bytewise(last_event_id);
    std::vector<sse_event> again;
    for (const char c : stream) {
        bytewise.feed(std::string_view(&c, 1));
        for (auto& e : drain(bytewise)) again.push_back(std::move(e));
    }
    REQUIRE(again.size() == events.size());
    for (std::size_t i = 0; i < events.size(); ++i) {
        CHECK(again[i].id == events[i].id);
        CHECK(again[i].type == events[i].type);
        CHECK(again[i].data == events[i].data);
    }
    CHECK(bytewise.last_event_id() == whole.last_event_id());
    CHECK(bytewise.retry() == whole.retry());
    return events;
}

}  // namespace

TEST_CASE("kit: sse data lines are joined with newlines, type and id as the fields say",
          "[kit][sse]") {
    const auto events = parse(
        "data: YHOO\ndata: +2\ndata: 10\n\n"
        "event: quote\nid: 7\ndata: {\"price\": 42}\n\n"
        "data:no space\n\n");
    REQUIRE(events.size() == 3);
    CHECK(events[0].data == "YHOO\n+2\n10");
    CHECK(events[0].type == "message");
    CHECK(events[0].id.empty());
    CHECK(events[1].type == "quote");
    CHECK(events[1].id == "7");
    CHECK(events[1].data == "{\"price\": 42}");
    CHECK(events[2].data == "no space");
    CHECK(events[2].id == "7");  // kept from the event before
    CHECK(events[2].type == "message");
}

TEST_CASE("kit: sse lines end at CRLF, LF or CR, and a leading byte order mark is dropped",
          "[kit][sse]") {
    const auto events = parse(
        "\xEF\xBB\xBF"
        "data: a\r\n\r\ndata: b\r\rdata: c\n\ndata: d\r\n\n");
    REQUIRE(events.size() == 4);
    CHECK(events[0].data == "a");
    CHECK(events[1].data == "b");
    CHECK(events[2].data == "c");
    CHECK(events[3].data == "d");
}

TEST_CASE("kit: sse comments, unknown fields and events without data are skipped", "[kit][sse]") {
    const auto events =
        parse(": keep-alive\n\n:\n\nevent: ping\n\nfoo: bar\ndata: x\n\ndata\n\nid: 9\n\n");
    REQUIRE(events.size() == 2);
    CHECK(events[0].data == "x");
    CHECK(events[0].type == "message");  // the "ping" type went with its data-less event
    CHECK(events[1].data.empty());       // "data" alone is a data line with an empty value
}

TEST_CASE("kit: an sse id-only event moves the last event id, an id with a NUL is ignored",
          "[kit][sse]") {
    using namespace std::string_literals;
    sse_parser parser("3");
    parser.feed("data: a\n\nid: 5\n\nid: 6\0x\ndata: b\n\nid\ndata: c\n\nid: 8\ndata: cut"s);
    const auto events = drain(parser);
    REQUIRE(events.size() == 3);
    CHECK(events[0].id == "3");  // the one the parser started with
    CHECK(events[1].id == "5");
    CHECK(events[2].id.empty());  // "id" with no value empties it
    CHECK(parser.last_event_id().empty());
    parser.restart();  // the event cut off by the end of the stream is dropped, its id too
    parser.feed("data: d\n\n");
    const auto after = drain(parser);
    REQUIRE(after.size() == 1);
    CHECK(after[0].id.empty());
    CHECK(after[0].data == "d");
}

TEST_CASE("kit: sse retry takes ASCII digits only", "[kit][sse]") {
    sse_parser parser;
    CHECK(parser.retry().count() == 0);
    parser.feed("retry: 2500\n\nretry: 1e3\n\nretry: -1\n\nretry: 12 \n\ndata: x\n\n");
    CHECK(parser.next());
    CHECK(parser.retry().count() == 2500);
}

TEST_CASE("kit: the sse parser parses no further than the event it returns", "[kit][sse]") {
    sse_parser parser;
    parser.feed("id: 1\ndata: one\n\nid: 2\nretry: 10\ndata: two\n\n");
    const auto first = parser.next();
    REQUIRE(first);
    CHECK(first->data == "one");
    CHECK(parser.last_event_id() == "1");
    CHECK(parser.retry().count() == 0);
    const auto second = parser.next();
    REQUIRE(second);
    CHECK(parser.last_event_id() == "2");
    CHECK(parser.retry().count() == 10);
    CHECK_FALSE(parser.next());
}

}  // namespace unit_test_testing_sse_parser

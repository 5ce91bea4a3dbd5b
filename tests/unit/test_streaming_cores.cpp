// The transport-free pieces of responses that outlive the handler: the streamed head and
// chunk framing of the writer, the text/event-stream format, the request copy a held
// response keeps, and the stream buffer's backpressure, without sockets.

#include "handling/streamed_body.hpp"
#include "http/exchange_port.hpp"
#include "http/request.hpp"
#include "http/writer.hpp"
#include "web/sse_format.hpp"

#include <catch2/catch.hpp>

#include <memory>
#include <string>

namespace unit_test_streaming_cores {

using namespace tern::detail;
using namespace std::chrono_literals;

namespace {

std::string without_date(std::string s) {
    const auto at = s.find("Date: ");
    REQUIRE(at != std::string::npos);
    s.erase(at, s.find("\r\n", at) + 2 - at);
    return s;
}

// A body_source that is never pulled: only its presence matters to the writer.
std::shared_ptr<body_source> some_source() {
    return streamed_body::tap(std::make_shared<streamed_body>(16, 64));
}

}  // namespace

TEST_CASE("a streamed head has Transfer-Encoding chunked and no Content-Length", "[stream]") {
    response res;
    res.content_type = "text/plain";
    res.source = some_source();
    std::string out;
    framing how;
    how.chunked = true;
    write_response(out, res, how);
    CHECK(without_date(out) ==
          "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n");
}

TEST_CASE("a close-delimited streamed head has neither length nor chunking", "[stream]") {
    response res;
    res.source = some_source();
    std::string out;
    framing how;
    how.close = true;
    write_response(out, res, how);
    CHECK(without_date(out) == "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n");
}

TEST_CASE("chunks are framed in place, an empty one is taken back", "[stream]") {
    std::string out = "head";
    auto at = begin_chunk(out);
    out += "hello";
    end_chunk(out, at);
    at = begin_chunk(out);
    end_chunk(out, at);  // nothing appended: no chunk (an empty one would end the body)
    at = begin_chunk(out);
    out += std::string(300, 'x');
    end_chunk(out, at);
    write_last_chunk(out);
    CHECK(out == "head00000005\r\nhello\r\n0000012c\r\n" + std::string(300, 'x') + "\r\n0\r\n\r\n");
}

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

TEST_CASE("a copied request views its own storage", "[deferred]") {
    request from;
    from.storage = "GET/items/42?x=1Hostexample.org";
    const std::string_view s = from.storage;
    from.method = s.substr(0, 3);
    from.target = s.substr(3, 13);
    from.path = s.substr(3, 9);
    from.query = s.substr(13, 3);
    from.headers.push_back({s.substr(16, 4), s.substr(20)});
    from.body = "payload";
    from.version_minor = 0;
    request to;
    copy_request(from, to);
    from.storage.assign(from.storage.size(), '#');  // the original's bytes are gone
    CHECK(to.method == "GET");
    CHECK(to.target == "/items/42?x=1");
    CHECK(to.path == "/items/42");
    CHECK(to.query == "x=1");
    REQUIRE(to.headers.size() == 1);
    CHECK(to.headers[0].name == "Host");
    CHECK(to.headers[0].value == "example.org");
    CHECK(to.body == "payload");
    CHECK(to.version_minor == 0);
    CHECK(rebase("static", from, to) == "static");
}

TEST_CASE("the stream buffer says false at its mark and is cut off past its limit", "[stream]") {
    auto s = std::make_shared<streamed_body>(10, 20);
    CHECK(s->write("12345"));
    CHECK_FALSE(s->write("67890"));  // at the mark: taken, but wait
    CHECK_FALSE(s->is_closed());
    std::string out;
    CHECK(s->pull(out, 4) == pull_status::more);
    CHECK(out == "1234");
    CHECK(s->pull(out, 100) == pull_status::more);
    CHECK(out == "1234567890");
    CHECK(s->write("abc"));
    CHECK_FALSE(s->write(std::string(30, 'z')));  // past the limit: cut off
    CHECK(s->is_closed());
    CHECK(s->cut_off());
    CHECK(s->pull(out, 100) == pull_status::aborted);
}

TEST_CASE("a stream ends after its last bytes are pulled, and on_writable follows a false",
          "[stream]") {
    auto s = std::make_shared<streamed_body>(4, 100);
    int writable = 0;
    bool closed = false;
    s->on_writable([&] { ++writable; });
    s->on_close([&] { closed = true; });
    CHECK_FALSE(s->write("abcdef"));
    s->end();
    std::string out;
    CHECK(s->pull(out, 3) == pull_status::more);
    CHECK(writable == 1);  // 3 left, below the mark
    CHECK(s->pull(out, 3) == pull_status::ended);
    CHECK(out == "abcdef");
    CHECK_FALSE(closed);
    s->closed();  // the transport lets go
    CHECK(closed);
    CHECK(s->is_closed());
    CHECK_FALSE(s->write("more"));
}

namespace {

// A loop that only counts the wake-ups posted to it: none of them runs.
struct counting_door final : loop_door {
    int posts = 0;
    bool post(std::function<void()>) override {
        ++posts;
        return true;
    }
    void after(std::chrono::nanoseconds, std::function<void(bool)>) override {}
    std::shared_ptr<fd_wait> wait_fd(int, bool, std::chrono::nanoseconds,
                                     std::function<void(fd_wait_end)>) override {
        return nullptr;
    }
};

}  // namespace

TEST_CASE("a cut-off wakes the transport even while an earlier wake-up found it writing",
          "[stream]") {
    // The transport takes a wake-up that arrives during a write as "the pull after the write
    // finds the bytes", so bytes need no second one; a cut-off does, or a write to a peer that
    // never reads would hide it until write_timeout.
    auto s = std::make_shared<streamed_body>(10, 20);
    auto door = std::make_shared<counting_door>();
    s->attach(door, {});
    s->write("12345");
    CHECK(door->posts == 1);
    s->write("678");
    CHECK(door->posts == 1);         // still pending: not pulled yet
    s->write(std::string(30, 'z'));  // past the limit
    CHECK(s->cut_off());
    CHECK(door->posts == 2);
    s->abort();  // already cut: nothing more to say
    CHECK(door->posts == 2);
}

TEST_CASE("a stream whose transport view is dropped tells its producer", "[stream]") {
    auto s = std::make_shared<streamed_body>(16, 64);
    bool closed = false;
    s->on_close([&] { closed = true; });
    { auto tap = streamed_body::tap(s); }
    CHECK(closed);
    CHECK_FALSE(s->write("x"));
}

}  // namespace unit_test_streaming_cores

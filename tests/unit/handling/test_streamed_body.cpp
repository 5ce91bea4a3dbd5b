// The stream buffer behind ctx.stream() and SSE (src/handling/streamed_body.hpp) without
// sockets: its backpressure mark and limit, the end of a stream, and the wake-ups it posts
// to the transport's loop.

#include "handling/streamed_body.hpp"
#include "http/exchange_port.hpp"

#include <catch2/catch.hpp>

#include <chrono>
#include <functional>
#include <memory>
#include <string>

namespace unit_test_handling_streamed_body {

using namespace tern::detail;

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

TEST_CASE("a stream's trailers join the response's at its end, and none is taken after end()",
          "[stream][trailers]") {
    auto s = std::make_shared<streamed_body>(64, 100);
    s->write("body");
    s->trailer("X-Sum", "4");
    s->trailer("x-both", "stream");
    s->end();
    s->trailer("x-late", "1");  // after end(): ignored
    std::string out;
    CHECK(s->pull(out, 64) == pull_status::ended);
    trailer_list into = {{"x-both", "response"}, {"x-first", "1"}};
    s->take_trailers(into);
    CHECK(into == trailer_list{{"x-both", "stream"}, {"x-first", "1"}, {"x-sum", "4"}});
    trailer_list again;
    s->take_trailers(again);  // taken once
    CHECK(again.empty());
}

TEST_CASE(
    "a trailer field is refused for what a header refuses and for what RFC 9110 6.5.1 "
    "keeps out of trailers",
    "[stream][trailers]") {
    CHECK(trailer_refusal("grpc-status", "0") == nullptr);
    CHECK(trailer_refusal("X-Checksum", "sha-256=abc") == nullptr);
    CHECK(trailer_refusal("ETag", "\"v1\"") == nullptr);
    for (const char* name : {"Content-Length",
                             "content-type",
                             "Content-Encoding",
                             "Host",
                             "transfer-encoding",
                             "TE",
                             "Trailer",
                             "Authorization",
                             "Set-Cookie",
                             "Cache-Control",
                             "Expect",
                             "Range",
                             "If-Match",
                             "Location",
                             "Retry-After",
                             "Vary",
                             "Age",
                             "Date",
                             "Connection",
                             "Keep-Alive",
                             "Upgrade",
                             "WWW-Authenticate",
                             ":status",
                             "a b",
                             ""}) {
        INFO(name);
        CHECK(trailer_refusal(name, "x") != nullptr);
    }
    CHECK(trailer_refusal("x-ok", "a\r\nb") != nullptr);
    CHECK(trailer_refusal("x-ok", "a\tb") == nullptr);
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
    // never reads would hide it until timeouts.write.
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

}  // namespace unit_test_handling_streamed_body

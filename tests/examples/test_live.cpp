// The live example's routes (examples/live/live_app.cpp), tested with the public test kit
// as an application's own tests would be: /events read as EventSource reads it, with its
// Last-Event-ID handling, the /ws echo, and the late and streamed answers. The built
// program on a port (its command line, TLS, real clients and browsers) is
// tests/examples/live_smoke.sh's and the other scripts'.

#include "live_app.hpp"

#include <catch2/catch.hpp>
#include <tern/testing.hpp>

#include <functional>
#include <string>

namespace {

using tern::testing::server;
using tern::testing::sse_options;

// Runs `fn` against the live example on a free port, its ticks running.
void with_live(const std::function<void(server&)>& fn) {
    live::services services;
    tern::app app;
    app.threads(2);
    live::add_routes(app, services);
    server running(app);
    fn(running);
}

// The tick a stream starts at when it is opened with `last_event_id`.
std::string first_tick(server& s, std::string last_event_id) {
    sse_options options;
    options.last_event_id = std::move(last_event_id);
    return s.sse("/events", options).next().data;
}

}  // namespace

TEST_CASE("live: /events ticks from 1, one id per tick", "[live]") {
    with_live([](server& s) {
        auto events = s.sse("/events");
        for (int n = 1; n <= 3; ++n) {
            const auto tick = events.next();
            CHECK(tick.data == "tick " + std::to_string(n));
            CHECK(tick.id == std::to_string(n));
            CHECK(tick.type == "message");
        }
        CHECK(events.last_event_id() == "3");
    });
}

TEST_CASE("live: a reconnect with Last-Event-ID resumes after it", "[live]") {
    with_live([](server& s) {
        auto events = s.sse("/events");
        events.next();
        events.next();
        events.reconnect();  // Last-Event-ID: 2
        const auto resumed = events.next();
        CHECK(resumed.data == "tick 3");
        CHECK(resumed.id == "3");
        CHECK(first_tick(s, "41") == "tick 42");
        CHECK(first_tick(s, "0") == "tick 1");
    });
}

TEST_CASE("live: a Last-Event-ID that is not a count of ours starts again at 1", "[live]") {
    with_live([](server& s) {
        for (const char* bad :
             {"abc", "-5", "12x", "9223372036854775807", "99999999999999999999"}) {
            CHECK(first_tick(s, bad) == "tick 1");
        }
        // The largest id it resumes after, and the wrap to 1 after its counter's maximum.
        sse_options options;
        options.last_event_id = "9223372036854775806";
        auto events = s.sse("/events", options);
        CHECK(events.next().data == "tick 9223372036854775807");
        CHECK(events.next().data == "tick 1");
    });
}

TEST_CASE("live: /ws echoes text and binary messages, large and fragmented", "[live]") {
    with_live([](server& s) {
        auto ws = s.ws("/ws");
        ws.send_text("hello live");
        CHECK(ws.receive().data == "hello live");
        ws.send_binary(std::string("\x00\xFF", 2));
        const auto binary = ws.receive();
        CHECK(binary.binary);
        CHECK(binary.data == std::string("\x00\xFF", 2));
        const std::string large(100000, 'x');
        ws.send_text(large);
        CHECK(ws.receive().data == large);

        tern::testing::ws_options fragmented;
        fragmented.fragment_size = 1000;
        auto pieces = s.ws("/ws", fragmented);
        pieces.send_text(large);
        CHECK(pieces.receive().data == large);
        CHECK(pieces.close() == 1000);
    });
}

TEST_CASE("live: /later answers after its delay, /stream sends its pieces", "[live]") {
    with_live([](server& s) {
        auto http = s.make_client();
        const auto later = http.get("/later?ms=50");
        CHECK(later.status == 200);
        CHECK(later.body == "later 50");
        CHECK(http.get("/later?ms=-1").status == 400);
        const auto stream = http.get("/stream?n=3&size=10");
        CHECK(stream.status == 200);
        CHECK(stream.body == "abcdefghijklmnopqrstuvwxyzabcd");
    });
}

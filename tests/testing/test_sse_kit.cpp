// The kit's Server-Sent Events reader (tern::testing::sse_reader) against real app.sse
// routes: the events as EventSource reads them, reconnecting with Last-Event-ID, retry,
// refusals, timeouts and the end of a stream; and against canned servers for the framings
// tern does not send.

#include "support/eventually.hpp"
#include "testing/canned_server.hpp"

#include <catch2/catch.hpp>
#include <tern/tern.hpp>
#include <tern/testing.hpp>

#include <chrono>
#include <string>

namespace kit_test_sse_kit {

using namespace std::chrono_literals;
using tern::testing::sse_options;
using tern::testing::sse_reader;

namespace {

// Counts from after the Last-Event-ID (from 1 on a first connect): three events, then the
// handler returns, the last copy of the client goes and the stream ends.
void add_counter(tern::app& app) {
    app.sse("/count", [](tern::context&, tern::sse_client client) {
        const std::string& last = client.last_event_id();
        const int from = last.empty() ? 1 : std::stoi(last) + 1;
        for (int n = from; n < from + 3; ++n) {
            client.send("n" + std::to_string(n), {}, std::to_string(n));
        }
    });
}

}  // namespace

TEST_CASE("sse_reader reads ids, types and multi-line data, skipping comments", "[kit][sse]") {
    tern::app app;
    app.sse("/events", [](tern::context&, tern::sse_client client) {
        client.comment("hello");
        client.send("first");
        client.send("line one\nline two\r\nline three", "update", "1");
        client.comment("between");
        client.send("after the id");
        client.send("{\"price\": 42}", "quote", "2");
    });
    tern::testing::server server(app);
    sse_reader events = server.sse("/events");

    bool found_type = false;
    for (const auto& h : events.headers()) {
        if (h.name == "Content-Type") found_type = h.value.starts_with("text/event-stream");
    }
    CHECK(found_type);
    const auto first = events.next();
    CHECK(first.data == "first");
    CHECK(first.type == "message");
    CHECK(first.id.empty());
    const auto second = events.next();
    CHECK(second.data == "line one\nline two\nline three");
    CHECK(second.type == "update");
    CHECK(second.id == "1");
    const auto third = events.next();
    CHECK(third.data == "after the id");
    CHECK(third.id == "1");  // kept from the event before
    const auto fourth = events.next();
    CHECK(fourth.type == "quote");
    CHECK(fourth.data == "{\"price\": 42}");
    CHECK(events.last_event_id() == "2");
}

TEST_CASE("sse_reader: the handler returning ends the stream with stream_ended", "[kit][sse]") {
    tern::app app;
    add_counter(app);
    tern::testing::server server(app);
    sse_reader events = server.sse("/count");
    CHECK(events.next().data == "n1");
    CHECK(events.next().data == "n2");
    CHECK(events.next().data == "n3");
    CHECK_THROWS_AS(events.next(), tern::testing::stream_ended);
    CHECK_THROWS_AS(events.next(), tern::testing::stream_ended);  // and stays ended
}

TEST_CASE("sse_reader reconnects with Last-Event-ID and the handler resumes after it",
          "[kit][sse]") {
    tern::app app;
    add_counter(app);
    tern::testing::server server(app);
    sse_reader events = server.sse("/count");
    for (int i = 0; i < 3; ++i) events.next();
    CHECK(events.last_event_id() == "3");
    CHECK_THROWS_AS(events.next(), tern::testing::stream_ended);

    events.reconnect();
    const auto resumed = events.next();
    CHECK(resumed.data == "n4");
    CHECK(resumed.id == "4");
    events.reconnect();  // in the middle of a stream too
    CHECK(events.next().data == "n5");

    sse_options later;
    later.last_event_id = "10";
    sse_reader from_ten(server.port(), "/count", later);
    CHECK(from_ten.last_event_id() == "10");
    CHECK(from_ten.next().data == "n11");
}

TEST_CASE("sse_reader sends the options' fields and keeps the last retry value", "[kit][sse]") {
    tern::app app;
    app.sse("/me", [](tern::context& ctx, tern::sse_client client) {
        client.retry(2500ms);
        client.send(std::string(ctx.cookie("session").value_or("none")) + " " +
                    std::string(ctx.header("Accept").value_or("")));
    });
    tern::testing::server server(app);
    sse_options options;
    options.headers = {{"Cookie", "session=ada"}};
    sse_reader events = server.sse("/me", options);
    CHECK(events.retry() == 0ms);
    CHECK(events.next().data == "ada text/event-stream");
    CHECK(events.retry() == 2500ms);
}

TEST_CASE("sse_reader refuses a route that is not an event stream with client_error",
          "[kit][sse]") {
    tern::app app;
    app.get("/plain", [](tern::context& ctx) { ctx.text("just text"); });
    tern::testing::server server(app);
    CHECK_THROWS_WITH(server.sse("/plain"), Catch::Contains("200") &&
                                                Catch::Contains("text/plain") &&
                                                Catch::Contains("just text"));
    CHECK_THROWS_WITH(server.sse("/nowhere"), Catch::Contains("404"));
    CHECK_THROWS_AS(server.sse("/nowhere"), tern::testing::client_error);
}

TEST_CASE("sse_reader: no event within the timeout is a timeout_error, and reading goes on",
          "[kit][sse]") {
    tern::sse_clients everyone;
    tern::app app;
    app.configure([](tern::config& c) {
        c.streams.sse_keep_alive = 50ms;
    });  // comments keep coming, events do not
    app.sse("/quiet",
            [&everyone](tern::context&, tern::sse_client client) { everyone.add(client); });
    tern::testing::server server(app);
    sse_options options;
    options.timeout = 300ms;
    sse_reader events = server.sse("/quiet", options);
    REQUIRE(tern_test::eventually([&] { return everyone.size() == 1; }));
    CHECK_THROWS_AS(events.next(), tern::testing::timeout_error);
    everyone.broadcast("at last", "late", "9");
    const auto late = events.next();
    CHECK(late.data == "at last");
    CHECK(late.type == "late");
}

TEST_CASE("sse_reader: the handler closing the stream, or the app stopping, is stream_ended",
          "[kit][sse]") {
    tern::sse_clients everyone;
    tern::app app;
    app.sse("/held", [&everyone](tern::context&, tern::sse_client client) {
        client.send("welcome");
        everyone.add(client);
    });
    tern::testing::server server(app);
    sse_reader first = server.sse("/held");
    sse_reader second = server.sse("/held");
    CHECK(first.next().data == "welcome");
    CHECK(second.next().data == "welcome");
    REQUIRE(tern_test::eventually([&] { return everyone.size() == 2; }));
    everyone.close_all();
    CHECK_THROWS_AS(first.next(), tern::testing::stream_ended);

    second.reconnect();
    CHECK(second.next().data == "welcome");
    server.stop();
    CHECK_THROWS_AS(second.next(), tern::testing::stream_ended);
    CHECK_THROWS_AS(second.reconnect(), tern::testing::client_error);  // the port is closed
}

TEST_CASE("sse_reader reads a close-delimited and a Content-Length event stream", "[kit][sse]") {
    tern_testing_test::canned_server close_delimited(
        "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream; charset=utf-8\r\n\r\n"
        "data: one\r\n\r\nid: 4\r\ndata: two\r\n\r\ndata: cut off",
        true);
    sse_reader events(close_delimited.port(), "/");
    CHECK(events.next().data == "one");
    CHECK(events.next().id == "4");
    CHECK_THROWS_AS(events.next(), tern::testing::stream_ended);  // the unfinished event is dropped

    tern_testing_test::canned_server sized(
        "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Length: 9\r\n\r\n"
        "data: a\n\ndata: never read\n\n",
        false);
    sse_reader short_stream(sized.port(), "/");
    CHECK(short_stream.next().data == "a");
    CHECK_THROWS_AS(short_stream.next(), tern::testing::stream_ended);
}

TEST_CASE("sse_reader: a silent server is a timeout_error from the constructor", "[kit][sse]") {
    tern_testing_test::canned_server silent("", false);
    sse_options options;
    options.timeout = 200ms;
    CHECK_THROWS_AS(sse_reader(silent.port(), "/", options), tern::testing::timeout_error);
}

}  // namespace kit_test_sse_kit

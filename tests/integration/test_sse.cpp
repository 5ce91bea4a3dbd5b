// app.sse over real sockets: the text/event-stream head, events (multi-line data, event
// types, ids, retry, comments), Last-Event-ID, keep-alive comments, broadcasts from another
// thread to clients on several event loops, close from either side, and the end of every
// stream at stop.

#include "support/eventually.hpp"
#include "support/test_server.hpp"

#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace wire_test_sse {

using namespace tern_test;
using namespace std::chrono_literals;

namespace {

// Reads until what `c` received contains `text` (or 5 s pass); returns everything received.
std::string read_until(raw_client& c, std::string_view text,
                       std::chrono::milliseconds limit = 5000ms) {
    const auto until = std::chrono::steady_clock::now() + limit;
    while (c.buffered().find(text) == std::string::npos &&
           std::chrono::steady_clock::now() < until) {
        c.receive_more(50ms);
    }
    return c.buffered();
}

}  // namespace

TEST_CASE("an SSE route answers an event stream with events in the standard format",
          "[wire][sse]") {
    test_server server([](tern::app& app) {
        app.sse("/events/{room}", [](tern::context& ctx, tern::sse_client client) {
            client.retry(2500ms);
            client.send("hello " + std::string(ctx.path_param("room")));
            client.send("line one\nline two\r\nline three", "update", "7");
            client.comment("just a comment");
            client.close();
        });
    });
    raw_client c = server.client();
    c.send(get_request("/events/lobby"));
    const auto r = c.read_response();
    INFO(describe(r));
    CHECK(r.status == 200);
    CHECK(r.header("Content-Type") == "text/event-stream");
    CHECK(r.header("Cache-Control") == "no-store");
    CHECK(r.header("Transfer-Encoding") == "chunked");
    CHECK(r.body ==
          "retry: 2500\n\n"
          "data: hello lobby\n\n"
          "event: update\nid: 7\ndata: line one\ndata: line two\ndata: line three\n\n"
          ": just a comment\n\n");
    check_still_serving(server.port());
}

TEST_CASE("an SSE client that reconnects gets its Last-Event-ID", "[wire][sse]") {
    test_server server([](tern::app& app) {
        app.sse("/events", [](tern::context&, tern::sse_client client) {
            const auto& last = client.last_event_id();
            const int next = last.empty() ? 1 : std::stoi(last) + 1;
            client.send("tick " + std::to_string(next), {}, std::to_string(next));
            client.close();
        });
    });
    CHECK(fetch(server, get_request("/events")).body == "id: 1\ndata: tick 1\n\n");
    CHECK(fetch(server, get_request("/events", "Last-Event-ID: 41\r\n")).body ==
          "id: 42\ndata: tick 42\n\n");
}

TEST_CASE("an SSE event with a line break in its type or id is refused", "[wire][sse]") {
    std::atomic<int> refused{0};
    test_server server([&](tern::app& app) {
        app.sse("/events", [&](tern::context&, tern::sse_client client) {
            for (auto [event, id] : {std::pair{"a\nb", ""}, std::pair{"", "1\r2"}}) {
                try {
                    client.send("data", event, id);
                } catch (const std::invalid_argument&) {
                    ++refused;
                }
            }
            client.close();
        });
    });
    CHECK(fetch(server, get_request("/events")).body.empty());
    CHECK(refused == 2);
}

TEST_CASE("a silent SSE stream sends keep-alive comments", "[wire][sse]") {
    tern::config cfg = test_config();
    cfg.streams.sse_keep_alive = 100ms;
    std::mutex m;
    std::vector<tern::sse_client> kept;
    test_server server(
        [&](tern::app& app) {
            app.sse("/quiet", [&](tern::context&, tern::sse_client client) {
                std::lock_guard lock(m);
                kept.push_back(std::move(client));
            });
        },
        cfg);
    raw_client c = server.client();
    c.send(get_request("/quiet"));
    // Two pings, each a chunk of its own: the interval restarts after each.
    const std::string ping = "\r\n:\n\n\r\n";
    const std::string got = read_until(c, ping + "00000003" + ping);
    INFO(got);
    CHECK(got.find(ping + "00000003" + ping) != std::string::npos);
}

TEST_CASE("a broadcast reaches SSE clients on every event loop, from another thread",
          "[wire][sse]") {
    tern::sse_clients everyone;
    test_server server([&](tern::app& app) {
        app.sse("/feed",
                [&](tern::context&, tern::sse_client client) { everyone.add(std::move(client)); });
    });
    constexpr std::size_t n = 8;  // over the two test threads' loops
    std::vector<raw_client> clients;
    for (std::size_t i = 0; i < n; ++i) {
        clients.push_back(server.client());
        clients.back().send(get_request("/feed"));
    }
    REQUIRE(eventually([&] { return everyone.size() == n; }));
    std::thread broadcaster([&] {
        for (int i = 1; i <= 3; ++i) CHECK(everyone.broadcast("news " + std::to_string(i)) == n);
    });
    broadcaster.join();
    for (auto& c : clients) {
        const std::string got = read_until(c, "data: news 3\n\n");
        INFO(got);
        CHECK(got.find("data: news 1\n\n") < got.find("data: news 2\n\n"));
        CHECK(got.find("data: news 3\n\n") != std::string::npos);
    }
    // Clients that leave are dropped by the next broadcast.
    clients[0].close();
    clients[1].close();
    CHECK(eventually([&] {
        everyone.broadcast("ping");
        return everyone.size() == n - 2;
    }));
}

TEST_CASE("an SSE client that leaves is noticed and on_close runs", "[wire][sse]") {
    std::atomic<bool> closed_seen{false};
    std::mutex m;
    std::vector<tern::sse_client> kept;
    test_server server([&](tern::app& app) {
        app.sse("/feed", [&](tern::context&, tern::sse_client client) {
            client.on_close([&] { closed_seen = true; });
            client.send("welcome");
            std::lock_guard lock(m);
            kept.push_back(std::move(client));
        });
    });
    raw_client c = server.client();
    c.send(get_request("/feed"));
    read_until(c, "data: welcome\n\n");
    c.close();
    CHECK(eventually([&] { return closed_seen.load(); }));
    std::lock_guard lock(m);
    CHECK(kept.at(0).closed());
    CHECK_FALSE(kept.at(0).send("anyone there?"));
}

TEST_CASE("stop() ends open SSE streams cleanly and does not wait for the drain deadline",
          "[wire][sse]") {
    tern::config cfg = test_config();
    cfg.timeouts.drain = 20s;
    tern::sse_clients everyone;
    auto server = std::make_unique<test_server>(
        [&](tern::app& app) {
            app.sse("/feed", [&](tern::context&, tern::sse_client client) {
                client.send("hello");
                everyone.add(std::move(client));
            });
        },
        cfg);
    raw_client c = server->client();
    c.send(get_request("/feed"));
    read_until(c, "data: hello\n\n");
    // A stop that waited for the drain deadline would keep the stream open for 20 s, past
    // the client's 5 s read deadline below.
    std::thread stopper([&] { server->stop(); });
    const std::string all = c.read_all_until_close(5s);
    stopper.join();
    CHECK(all.find("\r\n0\r\n\r\n") != std::string::npos);  // the stream ended, not cut off
    CHECK_FALSE(everyone.broadcast("after stop") > 0);
}

}  // namespace wire_test_sse

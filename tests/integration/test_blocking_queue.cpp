// The queue of tern::blocking handlers over real sockets: the work of a client that has gone
// is dropped before it runs, and its connection no longer counts; the queue has a bound
// (503 + Retry-After above it); stop() answers what has not started and returns after
// drain_timeout even while a handler still runs.

#include "support/eventually.hpp"
#include "support/gate.hpp"
#include "support/test_server.hpp"

#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <future>
#include <string>
#include <thread>
#include <vector>

namespace wire_test_blocking_queue {

using namespace tern_test;
using namespace std::chrono_literals;

namespace {

// One event loop and one pool thread: the first blocking request holds the pool, the
// next ones wait in its queue.
tern::config one_of_each() {
    tern::config cfg = test_config();
    cfg.threads = 1;
    cfg.blocking.threads = 1;
    return cfg;
}

// A route /slow whose first call waits at `hold` (holding the one pool thread) and whose
// every call is counted; a before filter counts the requests that reached the route.
struct slow_route {
    gate hold;
    std::promise<void> first_started;
    std::atomic<int> arrived{0};  // requests routed (the before filter ran, on the loop)
    std::atomic<int> calls{0};    // handler invocations (on the pool)
    std::atomic<bool> first_finished{false};

    void add_to(tern::app& app) {
        app.before("/slow", [this](tern::context&) { ++arrived; });
        app.get("/slow", tern::blocking([this](tern::context& ctx) {
                    if (++calls == 1) {
                        first_started.set_value();
                        hold.wait(30s);
                        first_finished = true;
                    }
                    ctx.text("done");
                }));
    }
};

}  // namespace

TEST_CASE("the blocking work of clients that closed before it started never runs",
          "[wire][blocking]") {
    slow_route slow;
    test_server server([&](tern::app& app) { slow.add_to(app); }, one_of_each());
    raw_client holder = server.client();
    holder.send(get_request("/slow"));
    REQUIRE(slow.first_started.get_future().wait_for(10s) == std::future_status::ready);
    // Ten clients send a request for the busy pool and close at once.
    for (int i = 0; i < 10; ++i) server.client().send_raw_and_close(get_request("/slow"));
    REQUIRE(eventually([&] { return slow.arrived == 11; }));
    // The server notices that they left and lets go of their connections.
    CHECK(eventually([&] { return server.app().stats().open_connections == 1; }));
    slow.hold.open();
    CHECK(holder.read_response().body == "done");
    raw_client real = server.client();
    real.send(get_request("/slow"));
    CHECK(real.read_response().body == "done");
    // The holder and the real request ran; the ten departed requests did not.
    CHECK(slow.calls == 2);
}

TEST_CASE("connections of departed clients no longer count against max_concurrent_connections",
          "[wire][blocking][limits]") {
    slow_route slow;
    tern::config cfg = one_of_each();
    cfg.limits.max_concurrent_connections = 4;
    test_server server([&](tern::app& app) { slow.add_to(app); }, cfg);
    raw_client holder = server.client();
    holder.send(get_request("/slow"));
    REQUIRE(slow.first_started.get_future().wait_for(10s) == std::future_status::ready);
    for (int i = 0; i < 3; ++i) server.client().send_raw_and_close(get_request("/slow"));
    REQUIRE(eventually([&] { return slow.arrived == 4; }));
    CHECK(eventually([&] { return server.app().stats().open_connections == 1; }));
    // Below the cap again: a fresh client is served, not refused with 503.
    check_still_serving(server.port());
    slow.hold.open();
    CHECK(holder.read_response().body == "done");
    CHECK(slow.calls == 1);
}

TEST_CASE("a client that shuts down its sending side while its blocking request waits is gone",
          "[wire][blocking]") {
    // As nginx by default (proxy_ignore_client_abort off): end of input while the answer is
    // pending means the client aborted. The request is dropped and the connection closed.
    slow_route slow;
    test_server server([&](tern::app& app) { slow.add_to(app); }, one_of_each());
    raw_client holder = server.client();
    holder.send(get_request("/slow"));
    REQUIRE(slow.first_started.get_future().wait_for(10s) == std::future_status::ready);
    raw_client half = server.client();
    half.send(get_request("/slow"));
    half.shutdown_write();
    CHECK(half.closed_by_peer(10s));
    CHECK(half.buffered().empty());
    slow.hold.open();
    CHECK(holder.read_response().body == "done");
    holder.send(get_request(alive_path));
    CHECK(holder.read_response().body == "alive");
    CHECK(slow.calls == 1);
}

TEST_CASE(
    "over max_blocking_queue waiting requests a blocking route answers 503 with Retry-After "
    "and the connection stays usable",
    "[wire][blocking][limits]") {
    slow_route slow;
    test_server server(
        [&](tern::app& app) {
            app.configure([](tern::config& c) { c.blocking.max_queue = 2; });
            // The 503 goes through the app's error handlers like tern's other errors.
            app.error(503, [](tern::context& ctx) { ctx.text("busy, come back"); });
            slow.add_to(app);
        },
        one_of_each());
    raw_client holder = server.client();
    holder.send(get_request("/slow"));
    REQUIRE(slow.first_started.get_future().wait_for(10s) == std::future_status::ready);
    std::vector<raw_client> queued;
    for (int i = 0; i < 2; ++i) {
        queued.push_back(server.client());
        queued.back().send(get_request("/slow"));
        // One event loop: once the filter has run, the request is in the queue before the
        // loop reads the next one.
        REQUIRE(eventually([&] { return slow.arrived == i + 2; }));
    }
    raw_client over = server.client();
    over.send(get_request("/slow"));
    const response r = over.read_response();
    INFO(describe(r));
    CHECK(r.status == 503);
    CHECK(r.header("Retry-After") == "1");
    CHECK(r.body == "busy, come back");
    CHECK_FALSE(r.header("Connection").has_value());
    over.send(get_request(alive_path));
    CHECK(over.read_response().body == "alive");
    slow.hold.open();
    CHECK(holder.read_response().body == "done");
    for (auto& c : queued) CHECK(c.read_response().body == "done");
    CHECK(slow.calls == 3);
}

TEST_CASE(
    "stop() answers blocking requests that have not started 503 and returns after "
    "drain_timeout while a handler still runs",
    "[wire][blocking][lifecycle]") {
    slow_route slow;
    tern::config cfg = one_of_each();
    cfg.timeouts.drain = 300ms;
    {
        test_server server([&](tern::app& app) { slow.add_to(app); }, cfg);
        raw_client running = server.client();
        running.send(get_request("/slow"));
        REQUIRE(slow.first_started.get_future().wait_for(10s) == std::future_status::ready);
        raw_client waiting = server.client();
        waiting.send(get_request("/slow"));
        REQUIRE(eventually([&] { return slow.arrived == 2; }));

        std::atomic<bool> stopped{false};
        auto stopper = std::async(std::launch::async, [&] {
            server.stop();
            stopped = true;
        });
        // The request that had not started is answered at once, and the connection closes.
        const response r = waiting.read_response();
        INFO(describe(r));
        CHECK(r.status == 503);
        CHECK(r.header("Retry-After") == "1");
        CHECK(r.header("Connection") == "close");
        CHECK(waiting.closed_by_peer());
        // The running handler's connection is closed unanswered at the drain deadline, and
        // stop() returns though the handler still waits at its gate.
        CHECK(running.closed_by_peer(10s));
        CHECK(running.buffered().empty());
        CHECK(eventually([&] { return stopped.load(); }));
        CHECK_FALSE(slow.first_finished);
        slow.hold.open();
        stopper.get();
        CHECK(slow.calls == 1);
    }
    // The app's destructor waited for the handler that outlived stop().
    CHECK(slow.first_finished);
}

TEST_CASE("blocking.max_queue refuses 0, blocking.max_wait a negative wait", "[blocking]") {
    tern::app app;
    CHECK_THROWS_AS(app.configure([](tern::config& c) { c.blocking.max_queue = 0; }),
                    std::invalid_argument);
    CHECK(app.settings().blocking.max_queue == 4096);
    CHECK_THROWS_AS(app.configure([](tern::config& c) { c.blocking.max_wait = -1ms; }),
                    std::invalid_argument);
    CHECK(app.settings().blocking.max_wait == 5s);
}

TEST_CASE(
    "a request that waited for a pool thread past max_blocking_wait is answered 503 + "
    "Retry-After without running, and those in time run",
    "[wire][blocking][limits]") {
    slow_route slow;
    test_server server(
        [&](tern::app& app) {
            app.configure([](tern::config& c) { c.blocking.max_wait = 200ms; });
            slow.add_to(app);
        },
        one_of_each());
    raw_client holder = server.client();
    holder.send(get_request("/slow"));
    REQUIRE(slow.first_started.get_future().wait_for(10s) == std::future_status::ready);
    raw_client late = server.client();
    late.send(get_request("/slow"));
    REQUIRE(eventually([&] { return slow.arrived == 2; }));
    // The one pool thread is held well past the wait bound; `late` waits in the queue.
    std::this_thread::sleep_for(400ms);
    slow.hold.open();
    CHECK(holder.read_response().body == "done");
    const response r = late.read_response();
    INFO(describe(r));
    CHECK(r.status == 503);
    CHECK(r.header("Retry-After") == "1");
    CHECK(slow.calls == 1);  // its handler never ran
    // A request that finds the thread free runs as usual.
    late.send(get_request("/slow"));
    CHECK(late.read_response().body == "done");
    CHECK(slow.calls == 2);
}

TEST_CASE(
    "a coroutine's on_blocking_pool work that waited past max_blocking_wait throws 503 at the "
    "co_await without running",
    "[wire][blocking][coroutine][limits]") {
    std::promise<void> started;
    std::atomic<bool> release{false};
    std::atomic<int> ran{0};
    test_server server(
        [&](tern::app& app) {
            app.configure([](tern::config& c) { c.blocking.max_wait = 200ms; });
            app.get("/work", [&](tern::context& ctx) -> tern::task {
                const bool first = ctx.query_param<int>("first", 0) == 1;
                co_await tern::on_blocking_pool([&, first] {
                    ++ran;
                    if (first) {
                        started.set_value();
                        while (!release) std::this_thread::sleep_for(5ms);
                    }
                });
                ctx.text("worked");
            });
        },
        one_of_each());
    raw_client holder = server.client();
    holder.send(get_request("/work?first=1"));
    REQUIRE(started.get_future().wait_for(10s) == std::future_status::ready);
    raw_client late = server.client();
    late.send(get_request("/work"));
    std::this_thread::sleep_for(400ms);
    release = true;
    CHECK(holder.read_response().body == "worked");
    const response r = late.read_response();
    INFO(describe(r));
    CHECK(r.status == 503);
    CHECK(r.body == "the blocking pool is overloaded");
    CHECK(ran == 1);
}

}  // namespace wire_test_blocking_queue

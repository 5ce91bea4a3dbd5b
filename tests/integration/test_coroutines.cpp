// Coroutine route handlers over real sockets: co_await a timer and a callback completed on
// another thread, holding no thread while suspended; exceptions mapped as a handler's; the
// rest of the chain applied at the end; a client that leaves and a stop during a sleep.

#include "support/coroutine_support.hpp"
#include "support/eventually.hpp"
#include "support/test_server.hpp"

#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

namespace wire_test_coroutines {

using namespace tern_test;
using namespace std::chrono_literals;

TEST_CASE("a coroutine handler sleeps without holding its loop and answers after",
          "[wire][coroutine]") {
    test_server server(
        [](tern::app& app) {
            app.get("/sleepy/{name}", [](tern::context& ctx) -> tern::task {
                const std::string name(ctx.path_param("name"));
                co_await tern::sleep_for(50ms);
                ctx.status(201).text("awake " + name);
            });
            app.after([](tern::context& ctx) { ctx.header("X-After", "ran"); });
        },
        one_thread());
    raw_client sleeper = server.client();
    sleeper.send(get_request("/sleepy/bob"));
    // The only event loop answers others while the coroutine sleeps.
    check_still_serving(server.port());
    const auto r = sleeper.read_response();
    INFO(describe(r));
    CHECK(r.status == 201);
    CHECK(r.body == "awake bob");
    CHECK(r.header("X-After") == "ran");
}

TEST_CASE("a coroutine handler awaits a callback completed on another thread",
          "[wire][coroutine]") {
    test_server server([](tern::app& app) {
        app.get("/lookup", [](tern::context& ctx) -> tern::task {
            const int answer = co_await tern::callback_result<int>([](tern::resume_with<int> done) {
                std::thread([done] {
                    std::this_thread::sleep_for(20ms);
                    done(42);
                }).detach();
            });
            ctx.text("answer " + std::to_string(answer));
        });
        app.get("/twice", [](tern::context& ctx) -> tern::task {
            int a = co_await tern::callback_result<int>([](auto done) { done(1); });
            int b = co_await tern::callback_result<int>([](auto done) { done(2); });
            ctx.text(std::to_string(a + b));
        });
    });
    CHECK(fetch(server, get_request("/lookup")).body == "answer 42");
    CHECK(fetch(server, get_request("/twice")).body == "3");
}

TEST_CASE("a callback dropped without being called answers 500, not a hung request",
          "[wire][coroutine]") {
    test_server server([](tern::app& app) {
        app.get("/dropped", [](tern::context& ctx) -> tern::task {
            const int v = co_await tern::callback_result<int>([](auto) {});
            ctx.text(std::to_string(v));
        });
    });
    CHECK(fetch(server, get_request("/dropped")).status == 500);
    check_still_serving(server.port());
}

TEST_CASE("an exception escaping a coroutine handler is mapped like a handler's",
          "[wire][coroutine]") {
    test_server server([](tern::app& app) {
        app.get("/conflict", [](tern::context&) -> tern::task {
            co_await tern::sleep_for(10ms);
            throw tern::http_error(409, "after a sleep");
        });
        app.get("/at-once", [](tern::context&) -> tern::task {
            throw tern::http_error(418, "before any suspension");
            co_return;
        });
        app.group("/api", [](tern::group& g) {
            g.get("/ping", [](tern::context& ctx) -> tern::task {
                co_await tern::sleep_for(1ms);
                ctx.text("pong");
            });
        });
    });
    const auto conflict = fetch(server, get_request("/conflict"));
    CHECK(conflict.status == 409);
    CHECK(conflict.body == "after a sleep");
    CHECK(fetch(server, get_request("/at-once")).status == 418);
    CHECK(fetch(server, get_request("/api/ping")).body == "pong");
}

TEST_CASE("many sleeping coroutine handlers on one loop all answer", "[wire][coroutine]") {
    test_server server(
        [](tern::app& app) {
            app.get("/nap", [](tern::context& ctx) -> tern::task {
                co_await tern::sleep_for(200ms);
                ctx.text("rested");
            });
        },
        one_thread());
    constexpr std::size_t n = 300;
    auto clients = open_clients(server.port(), n);
    for (auto& c : clients) c.send(get_request("/nap"));
    std::size_t answered = 0;
    for (auto& c : clients) answered += c.read_response().body == "rested" ? 1U : 0U;
    CHECK(answered == n);
}

TEST_CASE("a coroutine whose client left finishes without sending, and the server goes on",
          "[wire][coroutine]") {
    std::atomic<int> ended{0};
    test_server server([&](tern::app& app) {
        app.get("/nap", [&](tern::context& ctx) -> tern::task {
            frame_counter count{ended};
            co_await tern::sleep_for(100ms);
            ctx.text("nobody listens");
        });
    });
    {
        raw_client c = server.client();
        c.send(get_request("/nap"));
        std::this_thread::sleep_for(20ms);
    }  // closed during the sleep
    CHECK(eventually([&] { return ended == 1; }));
    check_still_serving(server.port());
}

TEST_CASE("stop() during a long sleep ends the coroutine at the drain deadline",
          "[wire][coroutine]") {
    std::atomic<int> ended{0};
    std::atomic<bool> woke{false};
    tern::config cfg = test_config();
    cfg.timeouts.drain = 300ms;
    test_server server(
        [&](tern::app& app) {
            app.get("/long", [&](tern::context& ctx) -> tern::task {
                frame_counter count{ended};
                co_await tern::sleep_for(60s);
                woke = true;
                ctx.text("never");
            });
        },
        cfg);
    raw_client c = server.client();
    c.send(get_request("/long"));
    std::this_thread::sleep_for(50ms);
    server.stop();      // returns: the sleep does not hold it for 60 s
    CHECK(ended == 1);  // the frame was destroyed, its locals with it
    CHECK_FALSE(woke);
    CHECK(c.closed_by_peer());
}

TEST_CASE("a coroutine handler awaits work on the blocking pool and resumes on its loop",
          "[wire][coroutine]") {
    std::atomic<bool> ran_elsewhere{false};
    test_server server(
        [&](tern::app& app) {
            app.get("/pool", [&](tern::context& ctx) -> tern::task {
                const auto loop_thread = std::this_thread::get_id();
                const int n = co_await tern::on_blocking_pool([&] {
                    ran_elsewhere = std::this_thread::get_id() != loop_thread;
                    std::this_thread::sleep_for(20ms);  // blocking here holds no loop
                    return 7;
                });
                // Back on the loop that runs the connection.
                const bool home = std::this_thread::get_id() == loop_thread;
                co_await tern::on_blocking_pool([] {});
                ctx.text(std::to_string(n) + (home ? " at home" : " elsewhere"));
            });
            app.get("/pool-throws", [](tern::context&) -> tern::task {
                co_await tern::on_blocking_pool(
                    []() -> int { throw tern::http_error(422, "bad input"); });
            });
        },
        one_thread());
    CHECK(fetch(server, get_request("/pool")).body == "7 at home");
    CHECK(ran_elsewhere);
    const auto r = fetch(server, get_request("/pool-throws"));
    CHECK(r.status == 422);
    CHECK(r.body == "bad input");
}

}  // namespace wire_test_coroutines

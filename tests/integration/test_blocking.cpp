// tern::blocking handlers over real sockets: they run on the blocking pool, so a handler
// that waits does not hold up the other connections of its event loop; filters, mappers,
// the logger and the write keep their places; stop() waits for them up to drain_timeout.

#include "support/gate.hpp"
#include "support/test_server.hpp"

#include <catch2/catch.hpp>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <future>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace wire_test_blocking {

using namespace tern_test;
using namespace std::chrono_literals;

namespace {

tern::config one_thread() {
    tern::config cfg = test_config();
    cfg.threads = 1;  // one event loop: whatever stalls it stalls every connection
    return cfg;
}

struct my_error : std::runtime_error {
    using std::runtime_error::runtime_error;
};

}  // namespace

TEST_CASE("a blocking handler that waits does not hold up other connections on its loop",
          "[wire][blocking]") {
    gate slow_may_finish;
    test_server server(
        [&](tern::app& app) {
            app.get("/slow", tern::blocking([&](tern::context& ctx) {
                        slow_may_finish.wait(10s);
                        ctx.text("slow");
                    }));
            app.get("/fast", [](tern::context& ctx) { ctx.text("fast"); });
        },
        one_thread());
    raw_client slow = server.client();
    slow.send(get_request("/slow"));
    // The slow handler is waiting now (or soon); the one event loop still answers.
    for (int i = 0; i < 3; ++i) {
        raw_client fast = server.client();
        fast.send(get_request("/fast"));
        CHECK(fast.read_response().body == "fast");
    }
    slow_may_finish.open();
    const response r = slow.read_response();
    CHECK(r.status == 200);
    CHECK(r.body == "slow");
    // The connection goes on with keep-alive after a deferred answer.
    slow.send(get_request("/fast"));
    CHECK(slow.read_response().body == "fast");
}

TEST_CASE(
    "the handler runs on a pool thread, filters, mappers' neighbours and the logger on "
    "the loop",
    "[wire][blocking]") {
    std::mutex m;
    std::thread::id before_id, handler_id, after_id, logger_id;
    test_server server(
        [&](tern::app& app) {
            app.before("/work", [&](tern::context&) {
                std::lock_guard lock(m);
                before_id = std::this_thread::get_id();
            });
            app.get("/work", tern::blocking([&](tern::context& ctx) {
                        {
                            std::lock_guard lock(m);
                            handler_id = std::this_thread::get_id();
                        }
                        ctx.text("done:" + std::string(ctx.query_param("x", "none")));
                    }));
            app.after("/work", [&](tern::context& ctx) {
                std::lock_guard lock(m);
                after_id = std::this_thread::get_id();
                ctx.header("X-After", "yes");
            });
            app.request_logger([&](const tern::context&, std::chrono::nanoseconds) {
                std::lock_guard lock(m);
                logger_id = std::this_thread::get_id();
            });
        },
        one_thread());
    const response r = fetch(server, get_request("/work?x=7"));
    CHECK(r.status == 200);
    CHECK(r.body == "done:7");
    CHECK(r.header("X-After") == "yes");
    std::lock_guard lock(m);
    CHECK(before_id != std::thread::id{});
    CHECK(handler_id != before_id);
    CHECK(after_id == before_id);
    CHECK(logger_id == before_id);
}

TEST_CASE("pipelined requests around blocking ones are answered in order", "[wire][blocking]") {
    test_server server([](tern::app& app) {
        app.get("/b/{n}", tern::blocking([](tern::context& ctx) {
                    std::this_thread::sleep_for(5ms);
                    ctx.text("b" + std::string(ctx.path_param("n")));
                }));
        app.get("/q/{n}",
                [](tern::context& ctx) { ctx.text("q" + std::string(ctx.path_param("n"))); });
    });
    raw_client c = server.client();
    std::string batch;
    for (int i = 0; i < 4; ++i) {
        batch += get_request("/b/" + std::to_string(i)) + get_request("/q/" + std::to_string(i));
    }
    batch += "HEAD /b/9 HTTP/1.1\r\nHost: localhost\r\n\r\n";
    c.send(batch);
    for (int i = 0; i < 4; ++i) {
        CHECK(c.read_response().body == "b" + std::to_string(i));
        CHECK(c.read_response().body == "q" + std::to_string(i));
    }
    const response head = c.read_response(true);
    CHECK(head.status == 200);
    CHECK(head.header("Content-Length") == "2");
    CHECK(head.body.empty());
}

TEST_CASE("responses ready before a waiting blocking request go out without waiting for it",
          "[wire][blocking]") {
    gate third_may_finish;
    test_server server([&](tern::app& app) {
        app.get("/b/{n}", tern::blocking([&](tern::context& ctx) {
                    if (ctx.path_param("n") == "1") third_may_finish.wait(10s);
                    ctx.text("b" + std::string(ctx.path_param("n")));
                }));
        app.get("/q", [](tern::context& ctx) { ctx.text("q"); });
    });
    raw_client c = server.client();
    c.send(get_request("/b/0") + get_request("/q") + get_request("/b/1"));
    CHECK(c.read_response().body == "b0");  // while /b/1 still waits at its gate
    CHECK(c.read_response().body == "q");
    third_may_finish.open();
    CHECK(c.read_response().body == "b1");
    c.send(get_request("/q"));
    CHECK(c.read_response().body == "q");
}

TEST_CASE("what a blocking handler throws is mapped as for any handler", "[wire][blocking]") {
    test_server server([](tern::app& app) {
        app.exception<my_error>([](const my_error& e, tern::context& ctx) {
            ctx.status(418).text(std::string("mapped: ") + e.what());
        });
        app.get("/mine", tern::blocking([](tern::context&) { throw my_error("boom"); }));
        app.get("/http", tern::blocking([](tern::context&) { throw tern::not_found("no such"); }));
        app.get("/other", tern::blocking([](tern::context&) { throw 42; }));
    });
    auto r = fetch(server, get_request("/mine"));
    CHECK(r.status == 418);
    CHECK(r.body == "mapped: boom");
    r = fetch(server, get_request("/http"));
    CHECK(r.status == 404);
    CHECK(r.body == "no such");
    r = fetch(server, get_request("/other"));
    CHECK(r.status == 500);
    check_still_serving(server.port());
}

TEST_CASE("no more than blocking_threads blocking handlers run at once, the rest wait their turn",
          "[wire][blocking]") {
    std::atomic<int> running{0};
    std::atomic<int> most{0};
    test_server server([&](tern::app& app) {
        app.configure([](tern::config& c) { c.blocking.threads = 2; });
        app.get("/w", tern::blocking([&](tern::context& ctx) {
                    const int now = ++running;
                    int seen = most.load();
                    while (now > seen && !most.compare_exchange_weak(seen, now)) {
                    }
                    std::this_thread::sleep_for(20ms);
                    --running;
                    ctx.text("ok");
                }));
    });
    std::vector<std::thread> clients;
    std::atomic<int> answered{0};
    for (int i = 0; i < 6; ++i) {
        clients.emplace_back([&] {
            raw_client c = server.client();
            c.send(get_request("/w"));
            if (c.read_response().body == "ok") ++answered;
        });
    }
    for (auto& t : clients) t.join();
    CHECK(answered == 6);
    CHECK(most <= 2);
    CHECK(most >= 1);
}

TEST_CASE("stop() waits for a running blocking handler, whose answer says Connection: close",
          "[wire][blocking][lifecycle]") {
    gate may_finish;
    std::promise<void> started;
    test_server server([&](tern::app& app) {
        app.get("/slow", tern::blocking([&](tern::context& ctx) {
                    started.set_value();
                    may_finish.wait(10s);
                    ctx.text("finished");
                }));
    });
    raw_client c = server.client();
    c.send(get_request("/slow"));
    REQUIRE(started.get_future().wait_for(10s) == std::future_status::ready);
    const auto port = server.port();
    std::thread stopper([&] { server.stop(); });
    // The stop has begun once the listener is gone.
    for (int i = 0; i < 1000 && raw_client::connect_error(port) != ECONNREFUSED; ++i) {
        std::this_thread::sleep_for(10ms);
    }
    may_finish.open();
    const response r = c.read_response();
    stopper.join();
    CHECK(r.status == 200);
    CHECK(r.body == "finished");
    CHECK(r.header("Connection") == "close");
}

TEST_CASE(
    "a blocking handler past drain_timeout: its connection closes and stop() returns while it "
    "runs",
    "[wire][blocking][lifecycle]") {
    gate may_finish;
    std::promise<void> started;
    std::atomic<bool> finished{false};
    tern::config cfg = test_config();
    cfg.timeouts.drain = std::chrono::milliseconds(200);
    test_server server(
        [&](tern::app& app) {
            app.get("/slow", tern::blocking([&](tern::context& ctx) {
                        started.set_value();
                        may_finish.wait(10s);
                        finished = true;
                        ctx.text("too late");
                    }));
        },
        cfg);
    raw_client c = server.client();
    c.send(get_request("/slow"));
    REQUIRE(started.get_future().wait_for(10s) == std::future_status::ready);
    std::atomic<bool> stopped{false};
    std::thread stopper([&] {
        server.stop();
        stopped = true;
    });
    // The drain deadline closes the waiting connection without an answer, and the stop
    // returns though the handler is still at its gate: it cannot be interrupted.
    CHECK(c.closed_by_peer(10s));
    for (int i = 0; i < 1000 && !stopped; ++i) std::this_thread::sleep_for(10ms);
    CHECK(stopped);
    CHECK_FALSE(finished);
    may_finish.open();
    stopper.join();
    // Another start() first waits for that handler, then serves anew.
    server.app().start("127.0.0.1", 0);
    CHECK(finished);
    check_still_serving(server.port());
}

TEST_CASE("stop() called from a blocking handler does not deadlock",
          "[wire][blocking][lifecycle]") {
    tern::app* self = nullptr;
    test_server server([&](tern::app& app) {
        self = &app;
        app.get("/quit", tern::blocking([&](tern::context& ctx) {
                    self->stop();  // returns at once on a pool thread; the owner finishes it
                    ctx.text("bye");
                }));
    });
    const response r = fetch(server, get_request("/quit"));
    CHECK(r.status == 200);
    CHECK(r.body == "bye");
    server.stop();  // the owner's stop joins the workers and the pool
    CHECK(server.app().port() == 0);
}

TEST_CASE("tern::blocking and blocking.threads refuse what cannot work", "[blocking]") {
    CHECK_THROWS_AS(tern::blocking(tern::handler{}), std::invalid_argument);
    tern::app app;
    CHECK_THROWS_AS(app.configure([](tern::config& c) { c.blocking.threads = 0; }),
                    std::invalid_argument);
}

}  // namespace wire_test_blocking

// The threading model: a connection stays on the thread that accepted it, and stop()
// lets a request in progress finish.

#include "support/test_server.hpp"

#include <catch2/catch.hpp>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <mutex>
#include <set>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

namespace wire_test_threads {

using namespace tern_test;

TEST_CASE("every request on one keep-alive connection runs on the same thread", "[wire][threads]") {
    std::mutex m;
    std::set<std::thread::id> seen;
    test_server server([&](tern::app& app) {
        app.get("/who", [&](tern::context& ctx) {
            std::lock_guard lock(m);
            seen.insert(std::this_thread::get_id());
            ctx.text("ok");
        });
    });
    raw_client c = server.client();
    for (int i = 0; i < 30; ++i) {
        c.send(get_request("/who"));
        REQUIRE(c.read_response().status == 200);
    }
    std::lock_guard lock(m);
    CHECK(seen.size() == 1);
    CHECK(seen.count(std::this_thread::get_id()) == 0);  // never the caller's thread
}

TEST_CASE("stop() lets a request in progress finish and answers it with Connection: close",
          "[wire][threads][lifecycle]") {
    std::atomic<bool> entered{false};
    std::atomic<bool> release{false};
    test_server server([&](tern::app& app) {
        app.get("/slow", [&](tern::context& ctx) {
            entered = true;
            while (!release) std::this_thread::sleep_for(std::chrono::milliseconds(1));
            ctx.text("finished");
        });
    });
    raw_client c = server.client();
    c.send(get_request("/slow"));
    while (!entered) std::this_thread::sleep_for(std::chrono::milliseconds(1));

    const auto port = server.port();
    // stop() blocks until the drain ends, so it runs beside the handler it waits for.
    std::thread stopper([&] { server.stop(); });
    // The handler is still running; once stop() has begun, let it finish.
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    release = true;
    const response r = c.read_response();
    stopper.join();
    INFO(describe(r));
    CHECK(r.status == 200);
    CHECK(r.body == "finished");
    CHECK(c.closed_by_peer());
    CHECK(raw_client::connect_error(port) == ECONNREFUSED);
}

TEST_CASE("stop() from several threads at once stops the server once",
          "[wire][threads][lifecycle]") {
    test_server server;
    std::vector<std::thread> stoppers;
    for (int i = 0; i < 4; ++i) stoppers.emplace_back([&] { server.stop(); });
    for (auto& t : stoppers) t.join();
    CHECK(server.port() == 0);
}

TEST_CASE("a handler may call stop(), the owning thread finishes it",
          "[wire][threads][lifecycle]") {
    tern::app app(test_config());
    app.get("/quit", [&](tern::context& ctx) {
        app.stop();
        ctx.text("bye");
    });
    std::thread runner([&] { app.listen("127.0.0.1", 0); });
    std::uint16_t port = 0;
    for (int i = 0; i < 500 && port == 0; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
        port = app.port();
    }
    REQUIRE(port != 0);
    raw_client c(port);
    c.send(get_request("/quit"));
    const response r = c.read_response();
    CHECK(r.body == "bye");
    runner.join();  // listen() returns once the stop a handler began has finished
    CHECK(app.port() == 0);
}

TEST_CASE("start() on a port another listener holds throws std::system_error",
          "[wire][threads][lifecycle]") {
    test_server first;
    tern::app second(test_config());
    second.get("/", [](tern::context& ctx) { ctx.text("second"); });
    CHECK_THROWS_AS(second.start("127.0.0.1", first.port()), std::system_error);
    check_still_serving(first.port());
}

}  // namespace wire_test_threads

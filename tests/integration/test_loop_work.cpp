// Work on the app's event loops outside a request (docs/loop-work.md): app.every's runs
// (cadence by order and "at least N by time T", never two at once, a late run delaying the
// next, exceptions, cancel, the stop), app.post and post_all (which thread, before the
// start, after the stop, a stop that drops what had not started), and a timer sending SSE
// events to a client over a real socket.

#include "support/eventually.hpp"
#include "support/gate.hpp"
#include "support/test_server.hpp"
#include "support/ws_client.hpp"

#include <catch2/catch.hpp>

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <mutex>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace wire_test_loop_work {

using namespace tern_test;
using namespace std::chrono_literals;
using clock_type = std::chrono::steady_clock;

namespace {

tern::config threads(unsigned n) {
    tern::config cfg = test_config();
    cfg.threads = n;
    return cfg;
}

// What a repeating task saw of its runs: when each began and ended, on which thread, and
// whether two ever overlapped.
struct run_log {
    std::mutex m;
    std::vector<clock_type::time_point> begins, ends;
    std::set<std::thread::id> threads;
    std::atomic<int> inside{0};
    std::atomic<bool> overlapped{false};

    // The task's body: records the run around `work`.
    void run(const std::function<void()>& work = {}) {
        if (inside.fetch_add(1) != 0) overlapped = true;
        {
            std::lock_guard lock(m);
            begins.push_back(clock_type::now());
            threads.insert(std::this_thread::get_id());
        }
        if (work) work();
        {
            std::lock_guard lock(m);
            ends.push_back(clock_type::now());
        }
        inside.fetch_sub(1);
    }
    std::size_t count() {
        std::lock_guard lock(m);
        return begins.size();
    }
};

// The thread id of the loop that answers GET /tid (with one loop: the app's only loop).
std::thread::id handler_thread(std::uint16_t port, std::mutex& m, std::thread::id& seen) {
    raw_client c(port);
    c.send(get_request("/tid"));
    REQUIRE(c.read_response().status == 200);
    std::lock_guard lock(m);
    return seen;
}

// Reads until what `c` received contains `text` (or 5 s pass); returns everything received.
std::string read_until(raw_client& c, std::string_view text) {
    const auto until = clock_type::now() + 5s;
    while (c.buffered().find(text) == std::string::npos && clock_type::now() < until) {
        c.receive_more(50ms);
    }
    return c.buffered();
}

// stderr, captured while it lives (the lines tern logs).
class stderr_capture {
public:
    stderr_capture() : file_(std::tmpfile()) {
        std::fflush(stderr);
        saved_ = ::dup(2);
        ::dup2(::fileno(file_), 2);
    }
    ~stderr_capture() {
        restore();
        std::fclose(file_);
    }
    stderr_capture(const stderr_capture&) = delete;
    stderr_capture& operator=(const stderr_capture&) = delete;
    std::string text() {
        std::fflush(stderr);
        std::string out;
        std::rewind(file_);
        char buf[512];
        std::size_t n = 0;
        while ((n = std::fread(buf, 1, sizeof buf, file_)) > 0) out.append(buf, n);
        return out;
    }
    void restore() {
        if (saved_ < 0) return;
        std::fflush(stderr);
        ::dup2(saved_, 2);
        ::close(saved_);
        saved_ = -1;
    }

private:
    std::FILE* file_;
    int saved_ = -1;
};

}  // namespace

// ---- every ---------------------------------------------------------------------------------

TEST_CASE(
    "every runs its task again and again on one loop, never two runs at once, the "
    "first one interval after the call",
    "[wire][loop-work]") {
    run_log log;
    test_server server({}, threads(2));
    const auto called = clock_type::now();
    auto task =
        server.app().every(20ms, [&] { log.run([] { std::this_thread::sleep_for(2ms); }); });
    CHECK(task.active());
    REQUIRE(eventually([&] { return log.count() >= 8; }));
    task.cancel();
    std::lock_guard lock(log.m);
    CHECK_FALSE(log.overlapped);
    CHECK(log.threads.size() == 1);  // every run on the same loop
    CHECK(log.threads.count(std::this_thread::get_id()) == 0);
    CHECK(log.begins.front() >= called + 20ms);  // timers never fire early
    // In order, each run beginning after the one before it ended.
    for (std::size_t i = 1; i < log.ends.size() && i < log.begins.size(); ++i) {
        CHECK(log.begins[i] >= log.ends[i - 1]);
    }
}

TEST_CASE("every registered before the start runs once the app has started, on a loop",
          "[wire][loop-work]") {
    run_log log;
    tern::app app(threads(2));
    const auto task = app.every(10ms, [&] { log.run(); });
    CHECK(task.active());
    std::this_thread::sleep_for(50ms);
    CHECK(log.count() == 0);  // no loop yet
    const auto started = clock_type::now();
    app.start("127.0.0.1", 0);
    CHECK(eventually([&] { return log.count() >= 3; }));
    app.stop();
    std::lock_guard lock(log.m);
    REQUIRE_FALSE(log.begins.empty());
    CHECK(log.begins.front() >= started + 10ms);
}

TEST_CASE("a run that takes longer than the interval delays the next one instead of a burst",
          "[wire][loop-work]") {
    run_log log;
    test_server server({}, threads(1));
    std::atomic<int> n{0};
    auto task = server.app().every(10ms, [&] {
        log.run([&] {
            if (n.fetch_add(1) == 1) std::this_thread::sleep_for(100ms);  // the second run
        });
    });
    REQUIRE(eventually([&] { return log.count() >= 6; }));
    task.cancel();
    std::lock_guard lock(log.m);
    CHECK_FALSE(log.overlapped);
    // After the long second run, the next begins a whole interval after it ended: the ten
    // intervals it spanned are not made up.
    REQUIRE(log.begins.size() >= 3);
    CHECK(log.begins[2] >= log.ends[1] + 10ms);
}

TEST_CASE("an exception from a repeating task is logged and the task goes on",
          "[wire][loop-work]") {
    stderr_capture captured;
    std::atomic<int> runs{0};
    {
        test_server server({}, threads(1));
        auto task = server.app().every(10ms, [&] {
            const int n = ++runs;
            if (n == 1) throw std::runtime_error("first run failed");
            if (n == 2) throw 42;  // not a std::exception
        });
        CHECK(eventually([&] { return runs.load() >= 4; }));
        CHECK(task.active());
    }
    const std::string text = captured.text();
    captured.restore();
    INFO(text);
    CHECK(text.find("tern: a repeating task (app::every) threw: first run failed") !=
          std::string::npos);
    CHECK(text.find("tern: a repeating task (app::every) threw a non-std exception") !=
          std::string::npos);
}

TEST_CASE("cancel from the task itself makes that run the last", "[wire][loop-work]") {
    test_server server({}, threads(2));
    std::atomic<int> runs{0};
    tern::repeating_task task;
    std::mutex m;
    std::unique_lock hold(m);  // the task's first run waits until `task` is set
    task = server.app().every(5ms, [&] {
        std::lock_guard lock(m);
        if (++runs == 3) task.cancel();
    });
    hold.unlock();
    REQUIRE(eventually([&] { return runs.load() >= 3; }));
    std::this_thread::sleep_for(100ms);  // twenty intervals
    CHECK(runs.load() == 3);
    std::lock_guard lock(m);
    CHECK_FALSE(task.active());
}

TEST_CASE("after cancel returns no run starts, except one under way, and cancel is idempotent",
          "[wire][loop-work]") {
    test_server server({}, threads(2));
    std::atomic<int> runs{0};
    auto task = server.app().every(2ms, [&] { ++runs; });
    auto copy = task;  // copies refer to the same task
    REQUIRE(eventually([&] { return runs.load() >= 5; }));
    copy.cancel();
    const int at_cancel = runs.load();
    CHECK_FALSE(task.active());
    CHECK_FALSE(copy.active());
    task.cancel();
    copy.cancel();
    std::this_thread::sleep_for(100ms);   // fifty intervals
    CHECK(runs.load() <= at_cancel + 1);  // a run under way when cancel ran may finish
    tern::repeating_task empty;
    CHECK_FALSE(empty.active());
    empty.cancel();
}

TEST_CASE("a task whose handle is dropped goes on running", "[wire][loop-work]") {
    test_server server({}, threads(2));
    std::atomic<int> runs{0};
    (void)server.app().every(5ms, [&] { ++runs; });
    CHECK(eventually([&] { return runs.load() >= 5; }));
}

TEST_CASE("every refuses an interval of zero or less and an empty function", "[wire][loop-work]") {
    tern::app app(threads(1));
    CHECK_THROWS_AS(app.every(0ms, [] {}), std::invalid_argument);
    CHECK_THROWS_AS(app.every(-5ms, [] {}), std::invalid_argument);
    CHECK_THROWS_AS(app.every(5ms, nullptr), std::invalid_argument);
    CHECK_THROWS_AS(app.post(nullptr), std::invalid_argument);
    CHECK_THROWS_AS(app.post_all(nullptr), std::invalid_argument);
}

TEST_CASE("stop ends repeating tasks and returns only after a run under way has finished",
          "[wire][loop-work]") {
    tern::app app(threads(2));
    app.start("127.0.0.1", 0);
    std::atomic<int> runs{0};
    std::atomic<bool> in_run{false}, finished{false};
    auto task = app.every(10ms, [&] {
        if (++runs != 2) return;
        in_run = true;
        std::this_thread::sleep_for(300ms);
        finished = true;
    });
    REQUIRE(eventually([&] { return in_run.load(); }));
    app.stop();
    CHECK(finished.load());  // the run under way was waited for
    const int at_stop = runs.load();
    CHECK(at_stop == 2);
    CHECK_FALSE(task.active());
    std::this_thread::sleep_for(100ms);
    CHECK(runs.load() == at_stop);
    // A task asked for once the app has stopped never runs.
    auto late = app.every(5ms, [&] { ++runs; });
    CHECK_FALSE(late.active());
    std::this_thread::sleep_for(50ms);
    CHECK(runs.load() == at_stop);
}

TEST_CASE("a stop begun with a health grace period ends repeating tasks at its start",
          "[wire][loop-work]") {
    tern::config cfg = threads(1);
    tern::health_config health;
    health.grace = 300ms;
    cfg.health = health;
    tern::app app(cfg);
    std::atomic<int> runs{0};
    auto task = app.every(5ms, [&] { ++runs; });
    app.start("127.0.0.1", 0);
    REQUIRE(eventually([&] { return runs.load() >= 2; }));
    std::thread stopper([&] { app.stop(); });
    REQUIRE(eventually([&] { return !task.active(); }));
    const int at_close = runs.load();
    stopper.join();
    CHECK(runs.load() <= at_close + 1);  // at most a run that was under way
}

// ---- post and post_all ---------------------------------------------------------------------

TEST_CASE("post from another thread runs on the loop that serves the handlers",
          "[wire][loop-work]") {
    std::mutex m;
    std::thread::id handler_tid;
    test_server server(
        [&](tern::app& app) {
            app.get("/tid", [&](tern::context& ctx) {
                {
                    std::lock_guard lock(m);
                    handler_tid = std::this_thread::get_id();
                }
                ctx.text("ok");
            });
        },
        threads(1));
    const auto loop = handler_thread(server.port(), m, handler_tid);
    std::atomic<bool> ran{false};
    std::thread::id posted_tid, poster_tid;
    std::thread poster([&] {
        poster_tid = std::this_thread::get_id();
        CHECK(server.app().post([&] {
            posted_tid = std::this_thread::get_id();
            ran = true;
        }));
    });
    poster.join();
    REQUIRE(eventually([&] { return ran.load(); }));
    CHECK(posted_tid == loop);
    CHECK(posted_tid != poster_tid);
    CHECK(posted_tid != std::this_thread::get_id());
}

TEST_CASE("posts from one thread to a one-loop app run in order, and an exception is logged",
          "[wire][loop-work]") {
    stderr_capture captured;
    std::mutex m;
    std::vector<int> order;
    {
        test_server server({}, threads(1));
        for (int i = 0; i < 50; ++i) {
            REQUIRE(server.app().post([&, i] {
                if (i == 10) throw std::runtime_error("post ten failed");
                std::lock_guard lock(m);
                order.push_back(i);
            }));
        }
        CHECK(eventually([&] {
            std::lock_guard lock(m);
            return order.size() == 49;
        }));
    }
    const std::string text = captured.text();
    captured.restore();
    std::lock_guard lock(m);
    CHECK(std::is_sorted(order.begin(), order.end()));
    CHECK(std::find(order.begin(), order.end(), 10) == order.end());
    INFO(text);
    CHECK(text.find("tern: a function posted to a loop (app::post) threw: post ten failed") !=
          std::string::npos);
}

TEST_CASE("post before the start waits for the loops and runs after the start",
          "[wire][loop-work]") {
    tern::app app(threads(2));
    std::atomic<int> ran{0};
    std::atomic<bool> started{false}, ran_before_start{false};
    CHECK(app.post([&] {
        if (!started) ran_before_start = true;
        ++ran;
    }));
    CHECK(app.post_all([&] { ++ran; }));
    std::this_thread::sleep_for(50ms);
    CHECK(ran.load() == 0);
    started = true;
    app.start("127.0.0.1", 0);
    CHECK(eventually([&] { return ran.load() == 3; }));  // one post, post_all on two loops
    CHECK_FALSE(ran_before_start.load());
    app.stop();
}

TEST_CASE("what waits for the loops stays queued through a start that fails", "[wire][loop-work]") {
    test_server holder({}, threads(1));  // holds a port
    tern::app app(threads(1));
    std::atomic<int> ran{0};
    CHECK(app.post([&] { ++ran; }));
    const auto task = app.every(5ms, [&] { ++ran; });
    CHECK_THROWS(app.start("127.0.0.1", holder.port()));  // the port is in use
    CHECK(task.active());
    CHECK(app.post([&] { ++ran; }));
    app.start("127.0.0.1", 0);
    CHECK(eventually([&] { return ran.load() >= 4; }));  // both posts and two runs
    app.stop();
}

TEST_CASE("post after the stop returns false and never runs, until the next start",
          "[wire][loop-work]") {
    tern::app app(threads(2));
    app.start("127.0.0.1", 0);
    app.stop();
    std::atomic<int> ran{0};
    CHECK_FALSE(app.post([&] { ++ran; }));
    CHECK_FALSE(app.post_all([&] { ++ran; }));
    std::this_thread::sleep_for(50ms);
    CHECK(ran.load() == 0);
    // A new start takes work again.
    app.start("127.0.0.1", 0);
    CHECK(app.post([&] { ++ran; }));
    CHECK(eventually([&] { return ran.load() == 1; }));
    app.stop();
    CHECK(ran.load() == 1);
}

TEST_CASE("post_all runs once on each loop", "[wire][loop-work]") {
    test_server server({}, threads(3));
    std::mutex m;
    std::vector<std::thread::id> seen;
    REQUIRE(server.app().post_all([&] {
        std::lock_guard lock(m);
        seen.push_back(std::this_thread::get_id());
    }));
    REQUIRE(eventually([&] {
        std::lock_guard lock(m);
        return seen.size() >= 3;
    }));
    std::this_thread::sleep_for(50ms);
    std::lock_guard lock(m);
    CHECK(seen.size() == 3);
    CHECK(std::set<std::thread::id>(seen.begin(), seen.end()).size() == 3);
    CHECK(std::count(seen.begin(), seen.end(), std::this_thread::get_id()) == 0);
}

TEST_CASE("a stop waits for a posted function under way and drops one not yet started",
          "[wire][loop-work]") {
    // A held request keeps the loop draining (and reading its messages) after the stop
    // began, so the function queued behind the running one is still taken from the inbox.
    std::mutex m;
    std::optional<tern::deferred> reply;
    tern::app app(threads(1));
    app.get("/held", [&](tern::context& ctx) {
        std::lock_guard lock(m);
        reply = ctx.defer();
    });
    app.start("127.0.0.1", 0);
    raw_client c(app.port());
    c.send(get_request("/held"));
    REQUIRE(eventually([&] {
        std::lock_guard lock(m);
        return reply.has_value();
    }));
    gate release;
    std::atomic<bool> first_in{false}, first_done{false}, second_ran{false};
    REQUIRE(app.post([&] {
        first_in = true;
        release.wait();
        first_done = true;
    }));
    REQUIRE(eventually([&] { return first_in.load(); }));
    REQUIRE(app.post([&] { second_ran = true; }));  // queued behind the first, on its loop
    std::atomic<bool> stopped{false}, first_done_at_stop{false};
    std::thread stopper([&] {
        app.stop();
        first_done_at_stop = first_done.load();
        stopped = true;
    });
    // The stop has begun once posting is refused; the first function is still running.
    REQUIRE(eventually([&] { return !app.post([] {}); }));
    std::this_thread::sleep_for(50ms);
    CHECK_FALSE(stopped.load());
    release.open();
    std::this_thread::sleep_for(50ms);  // the loop takes the second function meanwhile
    {
        std::lock_guard lock(m);
        reply->complete([](tern::context& ctx) { ctx.text("done"); });
    }
    const auto r = c.read_response();
    CHECK(r.body == "done");
    stopper.join();
    CHECK(first_done_at_stop.load());
    CHECK_FALSE(second_ran.load());
}

// ---- the public API from the loop ----------------------------------------------------------

TEST_CASE("a repeating task sends SSE events to a client connected over a real socket",
          "[wire][loop-work]") {
    tern::sse_clients everyone;
    std::atomic<int> tick{0};
    test_server server(
        [&](tern::app& app) {
            app.sse("/ticks", [&](tern::context&, tern::sse_client client) {
                everyone.add(std::move(client));
            });
            app.every(20ms, [&] {
                const auto n = std::to_string(++tick);
                everyone.broadcast("tick " + n, {}, n);
            });
        },
        threads(1));  // the task runs on the loop of the client's connection
    raw_client c = server.client();
    c.send(get_request("/ticks"));
    REQUIRE(eventually([&] { return everyone.size() == 1; }));
    const int first = tick.load() + 1;
    const std::string got = read_until(c, "data: tick " + std::to_string(first + 2) + "\n\n");
    INFO(got);
    const auto a = got.find("data: tick " + std::to_string(first) + "\n\n");
    const auto b = got.find("data: tick " + std::to_string(first + 1) + "\n\n");
    const auto d = got.find("data: tick " + std::to_string(first + 2) + "\n\n");
    REQUIRE(d != std::string::npos);
    CHECK(a < b);
    CHECK(b < d);
}

TEST_CASE("a repeating task sends WebSocket messages to a connection held from its handler",
          "[wire][loop-work]") {
    tern::ws_clients room;
    std::atomic<int> tick{0};
    test_server server(
        [&](tern::app& app) {
            app.ws("/room", [&](tern::ws_handlers& ws) {
                ws.on_connect([&](tern::ws_connection& c) { room.add(c); });
                ws.on_close([&](tern::ws_connection& c, int, std::string_view) { room.remove(c); });
            });
            app.every(20ms, [&] { room.broadcast("tick " + std::to_string(++tick)); });
        },
        threads(1));  // the task runs on the loop of the client's connection
    ws_client c(server.port(), "/room");
    REQUIRE(c.handshake.status == 101);
    REQUIRE(eventually([&] { return room.size() == 1; }));
    std::vector<int> got;
    while (got.size() < 3) {
        const auto frame = c.read_frame();
        REQUIRE(frame.has_value());
        REQUIRE(frame->opcode == 1);
        REQUIRE(frame->payload.rfind("tick ", 0) == 0);
        got.push_back(std::stoi(frame->payload.substr(5)));
    }
    CHECK(got[0] < got[1]);
    CHECK(got[1] < got[2]);
}

TEST_CASE("post_all sends to an SSE client held from a handler, on its own loop",
          "[wire][loop-work]") {
    std::mutex m;
    tern::sse_client held;
    std::thread::id handler_tid;
    test_server server(
        [&](tern::app& app) {
            app.sse("/one", [&](tern::context&, tern::sse_client client) {
                std::lock_guard lock(m);
                held = std::move(client);
                handler_tid = std::this_thread::get_id();
            });
        },
        threads(2));
    raw_client c = server.client();
    c.send(get_request("/one"));
    REQUIRE(eventually([&] {
        std::lock_guard lock(m);
        return static_cast<bool>(held);
    }));
    // Each loop sends only if it is the client's: the send happens on the connection's loop.
    REQUIRE(server.app().post_all([&] {
        std::lock_guard lock(m);
        if (std::this_thread::get_id() == handler_tid) held.send("from its loop");
    }));
    const std::string got = read_until(c, "data: from its loop\n\n");
    INFO(got);
    CHECK(got.find("data: from its loop\n\n") != std::string::npos);
}

}  // namespace wire_test_loop_work

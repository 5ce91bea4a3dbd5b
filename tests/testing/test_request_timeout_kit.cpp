// tern::request_timeout over real sockets, HTTP/1.1 and HTTP/2 (h2c): a deferred answer that
// never comes is answered 503 at the deadline and the handler is told (cancelled, on_cancel,
// its late completion refused); a coroutine waiting on a descriptor sees its wait cancelled;
// a handler that returns late has its answer replaced; app.error shapes the answer; the
// connection goes on; routes without the filter are untouched.

#include <catch2/catch.hpp>
#include <tern/tern.hpp>
#include <tern/testing.hpp>

#if !defined(_WIN32)
#include <unistd.h>
#endif

#include <atomic>
#include <chrono>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>

namespace kit_test_request_timeout_kit {

using namespace std::chrono_literals;
using clock_type = std::chrono::steady_clock;

namespace {

// What the handlers saw, for the checks.
struct observed {
    std::mutex mutex;
    std::optional<tern::deferred> kept;  // the deferred response nobody completes in time
    std::atomic<bool> on_cancel_ran{false};
    std::atomic<int> wait_end{-1};  // the coroutine's descriptor wait: how it ended
};

void add_routes(tern::app& app, observed& seen, int pipe_read_end) {
    app.before("/slow/*", tern::request_timeout(300ms));
    // Deferred, never completed in time: kept so the test can try completing it late.
    app.get("/slow/deferred", [&seen](tern::context& ctx) {
        auto reply = ctx.defer();
        reply.on_cancel([&seen] { seen.on_cancel_ran = true; });
        const std::lock_guard lock(seen.mutex);
        seen.kept = reply;
    });
    // A handler that blocks its loop past the limit, then answers.
    app.get("/slow/sync", [](tern::context& ctx) {
        std::this_thread::sleep_for(500ms);
        ctx.text("late");
    });
    // Quick enough.
    app.get("/slow/quick", [](tern::context& ctx) { ctx.text("quick"); });
    app.get("/free", [](tern::context& ctx) {
        std::this_thread::sleep_for(400ms);
        ctx.text("free");
    });
    // A coroutine waiting on a pipe nobody writes to (not on Windows: no pipe).
    if (pipe_read_end < 0) return;
    app.get("/slow/coroutine", [&seen, pipe_read_end](tern::context& ctx) -> tern::task {
        const auto how = co_await tern::wait_readable(pipe_read_end, std::chrono::seconds(30));
        seen.wait_end = static_cast<int>(how);
        ctx.text("too late");
    });
}

void check_timeouts(tern::testing::client& http, observed& seen, bool with_coroutine) {
    auto started = clock_type::now();
    const auto deferred = http.get("/slow/deferred");
    auto took = clock_type::now() - started;
    CHECK(deferred.status == 503);
    CHECK(deferred.body == "the handler did not answer within its time limit");
    CHECK(took >= 300ms);
    CHECK(took < 5s);
    CHECK(seen.on_cancel_ran);
    {
        const std::lock_guard lock(seen.mutex);
        REQUIRE(seen.kept.has_value());
        CHECK(seen.kept->cancelled());
        // The late completion is refused: nothing of it reaches the wire.
        CHECK_FALSE(seen.kept->complete([](tern::context& ctx) { ctx.text("late answer"); }));
        seen.kept.reset();
    }
    // The connection goes on, in order.
    CHECK(http.get("/slow/quick").body == "quick");

    if (with_coroutine) {
        started = clock_type::now();
        const auto coroutine = http.get("/slow/coroutine");
        took = clock_type::now() - started;
        CHECK(coroutine.status == 503);
        CHECK(took < 5s);
        for (int i = 0; i < 100 && seen.wait_end < 0; ++i) std::this_thread::sleep_for(10ms);
        CHECK(seen.wait_end == static_cast<int>(tern::io_ready::cancelled));
    }

    const auto sync = http.get("/slow/sync");
    CHECK(sync.status == 503);  // its "late" was replaced
    CHECK(sync.body == "the handler did not answer within its time limit");
    CHECK(http.get("/free").body == "free");  // no limit there, though slower than 300 ms
}

// A pipe for the coroutine's descriptor wait. Windows has neither pipes to wait on nor
// descriptor waits (docs/platforms.md): none there, and no coroutine route.
#if defined(_WIN32)
struct pipe_pair {
    int fds[2] = {-1, -1};
};
#else
struct pipe_pair {
    int fds[2] = {-1, -1};
    pipe_pair() {
        if (::pipe(fds) != 0) throw std::runtime_error("pipe");
    }
    ~pipe_pair() {
        ::close(fds[0]);
        ::close(fds[1]);
    }
    pipe_pair(const pipe_pair&) = delete;
    pipe_pair& operator=(const pipe_pair&) = delete;
};
#endif

}  // namespace

TEST_CASE("request_timeout answers 503 at the deadline and cancels the handler, HTTP/1.1",
          "[kit][request_timeout]") {
    observed seen;
    pipe_pair p;
    tern::app app;
    add_routes(app, seen, p.fds[0]);
    tern::testing::server server(app);
    auto http = server.make_client();
    check_timeouts(http, seen, p.fds[0] >= 0);
}

TEST_CASE("request_timeout answers 503 at the deadline and cancels the handler, HTTP/2",
          "[kit][request_timeout][h2]") {
    observed seen;
    pipe_pair p;
    tern::app app;
    add_routes(app, seen, p.fds[0]);
    tern::testing::server server(app);
    auto http = server.make_client({.http2 = true});
    check_timeouts(http, seen, p.fds[0] >= 0);
    CHECK(server.app().stats().h2_connections == 1);
}

TEST_CASE("request_timeout's status goes through app.error, and the earliest limit wins",
          "[kit][request_timeout]") {
    tern::app app;
    app.before(tern::request_timeout(10s));
    app.before("/api/*", tern::request_timeout(200ms, 504));
    app.get("/api/never", [](tern::context& ctx) { (void)ctx.defer(); });  // dropped: see below
    std::optional<tern::deferred> held;
    std::mutex mutex;
    app.get("/api/held", [&](tern::context& ctx) {
        const std::lock_guard lock(mutex);
        held = ctx.defer();
    });
    app.error(504, [](tern::context& ctx) { ctx.text("took too long"); });
    tern::testing::server server(app);
    auto http = server.make_client();
    const auto r = http.get("/api/held");
    CHECK(r.status == 504);
    CHECK(r.body == "took too long");
    // A handle dropped before the deadline is still a 500, as without a limit.
    CHECK(http.get("/api/never").status == 500);
    const std::lock_guard lock(mutex);
    held.reset();
}

TEST_CASE("request_timeout refuses what cannot work", "[kit][request_timeout]") {
    CHECK_THROWS_AS(tern::request_timeout(0ms), std::invalid_argument);
    CHECK_THROWS_AS(tern::request_timeout(1s, 404), std::invalid_argument);
}

}  // namespace kit_test_request_timeout_kit

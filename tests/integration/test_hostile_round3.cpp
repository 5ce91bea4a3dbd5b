// Issue 31, "not yet attacked": surfaces attacked over real sockets for the first time. Each
// case is one attack and what must hold; docs/security.md has a line for each.
// (Spool disk quotas, zero-window HTTP/2 holds and HEAD compression have their own tests.)

#include "support/temp_dir.hpp"
#include "support/test_server.hpp"

#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <set>
#include <string>
#include <thread>

namespace wire_test_hostile_round3 {

using namespace tern_test;
using namespace std::chrono_literals;

namespace {

#if !defined(_WIN32)
// The descriptors of this process (the server runs in it) that point at a deleted file in
// `dir`: what an unnamed spool file (O_TMPFILE) looks like in /proc/self/fd.
int spool_files_open(const std::filesystem::path& dir) {
    int n = 0;
    for (const auto& e : std::filesystem::directory_iterator("/proc/self/fd")) {
        std::error_code ec;
        const auto target = std::filesystem::read_symlink(e.path(), ec).string();
        if (!ec && target.rfind(dir.string(), 0) == 0) ++n;
    }
    return n;
}
#else
// Windows has no /proc: a spool file there keeps its name in `dir` until its last descriptor
// closes (delete-on-close, platform/files_windows.cpp), so the open ones are the names there.
int spool_files_open(const std::filesystem::path& dir) {
    int n = 0;
    for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir)) ++n;
    return n;
}
#endif

// The metric lines (not comments) of a scrape.
std::set<std::string> series_of(const std::string& body) {
    std::set<std::string> out;
    std::size_t at = 0;
    while (at < body.size()) {
        auto end = body.find('\n', at);
        if (end == std::string::npos) end = body.size();
        const auto line = body.substr(at, end - at);
        if (!line.empty() && line[0] != '#') out.insert(line.substr(0, line.rfind(' ')));
        at = end + 1;
    }
    return out;
}

}  // namespace

TEST_CASE(
    "the small-file cache never serves a file swapped for a symlink out of the root, even "
    "while the old answer is held",
    "[wire][static][hostile]") {
    temp_dir outside;
    outside.write("secret.txt", "SECRET");
    temp_dir root;
    root.write("page.txt", "public page");
    test_server server([&](tern::app& app) { app.static_files(root.path.string()); });
    CHECK(fetch(server, get_request("/page.txt")).body == "public page");  // now held
    std::filesystem::remove(root.path / "page.txt");
    std::filesystem::create_symlink(outside.path / "secret.txt", root.path / "page.txt");
    // Within the cache's second and after it: never the target's bytes.
    for (int i = 0; i < 3; ++i) {
        const auto r = fetch(server, get_request("/page.txt"));
        INFO(describe(r));
        CHECK(r.body.find("SECRET") == std::string::npos);
        std::this_thread::sleep_for(600ms);
    }
    check_still_serving(server.port());
}

TEST_CASE(
    "a spooled upload's unnamed file is released when its client leaves mid-body or stalls "
    "past body_idle_timeout",
    "[wire][upload][hostile]") {
    temp_dir spool;
    tern::config cfg = test_config();
    cfg.spool.body_above = 1024;
    cfg.spool.directory = spool.path.string();
    cfg.timeouts.body_idle = 300ms;
    test_server server(
        [](tern::app& app) {
            app.post("/up",
                     [](tern::context& ctx) { ctx.text(std::to_string(ctx.body().size())); });
        },
        cfg);
    const std::string head = "POST /up HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000\r\n\r\n";
    {
        raw_client leaves = server.client();
        leaves.send(head + std::string(200'000, 'a'));
        raw_client stalls = server.client();
        stalls.send(head + std::string(200'000, 'b'));
        // Both are being spooled now (the files exist while the bodies come in).
        const auto spooling = [&] { return spool_files_open(spool.path); };
        for (int i = 0; i < 50 && spooling() < 2; ++i) std::this_thread::sleep_for(20ms);
        CHECK(spooling() == 2);
        // `stalls` stays silent past body_idle_timeout; `leaves` closes now.
        const auto r = stalls.read_response();
        CHECK(r.status == 408);
    }
    for (int i = 0; i < 100 && spool_files_open(spool.path) > 0; ++i) {
        std::this_thread::sleep_for(20ms);
    }
    CHECK(spool_files_open(spool.path) == 0);
    // Nothing is left in the directory either: the files never had a name.
    CHECK(std::filesystem::is_empty(spool.path));
    check_still_serving(server.port());
}

TEST_CASE(
    "the metrics endpoint's series do not grow with paths, methods or statuses a client "
    "chooses",
    "[wire][metrics][hostile]") {
    test_server server([](tern::app& app) {
        app.metrics("/metrics");
        app.get("/items/{id}", [](tern::context& ctx) { ctx.text("item"); });
    });
    raw_client c = server.client();
    auto scrape = [&] {
        c.send(get_request("/metrics"));
        return series_of(c.read_response().body);
    };
    // One request of each kind first, so every label value the attack can reach exists.
    c.send(get_request("/items/1"));
    c.read_response();
    c.send(get_request("/nothing"));
    c.read_response();
    const auto before = scrape();
    REQUIRE(before.size() > 10);
    for (int i = 0; i < 300; ++i) {
        c.send(get_request("/items/" + std::to_string(i)));
        c.read_response();
        c.send(get_request("/unknown/" + std::to_string(i)));
        c.read_response();
    }
    for (const char* m : {"PROPFIND", "MKCOL", "LOCK", "PURGE", "SEARCH", "REPORT"}) {
        c.send(std::string(m) + " /items/1 HTTP/1.1\r\nHost: x\r\n\r\n");
        c.read_response();
    }
    const auto after = scrape();
    std::set<std::string> added;
    for (const auto& s : after) {
        if (before.count(s) == 0) added.insert(s);
    }
    INFO(added.size() << " new series");
    // Methods outside the usual ones share one label value; paths are no label at all.
    CHECK(added.size() <= 2);
    CHECK(after.size() < before.size() + 3);
}

TEST_CASE("a validation 400 never echoes the value a client sent, in text or JSON",
          "[wire][validation][hostile]") {
    test_server server([](tern::app& app) {
        app.get("/one", [](tern::context& ctx) {
            ctx.text(std::to_string(ctx.query_param_as<int>("n").get()));
        });
    });
    const std::string hostile = "%22%3Cscript%3Ealert(1)%3C%2Fscript%3E%0D%0AX-Evil:%201";
    for (const char* accept : {"text/plain", "application/json"}) {
        INFO(accept);
        const auto r = fetch(
            server, get_request("/one?n=" + hostile, std::string("Accept: ") + accept + "\r\n"));
        INFO(describe(r));
        CHECK(r.status == 400);
        CHECK(r.body.find("script") == std::string::npos);
        CHECK(r.body.find("Evil") == std::string::npos);
        CHECK_FALSE(r.header("X-Evil"));
    }
}

TEST_CASE(
    "a Last-Event-ID with a bare CR, a NUL or another control byte never reaches an SSE "
    "handler",
    "[wire][sse][hostile]") {
    std::atomic<int> reached{0};
    test_server server([&](tern::app& app) {
        app.sse("/events", [&](tern::context&, tern::sse_client client) {
            ++reached;
            client.close();
        });
    });
    using namespace std::string_literals;
    for (const std::string& value : {"1\r2"s, "1\0002"s, "1\x01"s, "1\x7f"s}) {
        const auto r = fetch(server, "GET /events HTTP/1.1\r\nHost: x\r\nLast-Event-ID: "s + value +
                                         "\r\nConnection: close\r\n\r\n");
        INFO(describe(r));
        CHECK(r.status == 400);
    }
    CHECK(reached == 0);
    check_still_serving(server.port());
}

}  // namespace wire_test_hostile_round3

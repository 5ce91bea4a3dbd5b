// app.metrics over the wire (docs/metrics.md): a scrape after a known set of requests of
// several methods and status classes shows exactly those counts, the histogram agrees with
// them, and the gauges follow requests held, queued and finished.

#include "support/eventually.hpp"
#include "support/test_server.hpp"

#include <catch2/catch.hpp>

#include <cstdlib>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace wire_test_metrics_wire {

using namespace tern_test;

namespace {

/// The samples of an exposition: "name{labels}" to value. Fails the test on a line that is
/// neither a comment nor a sample.
std::map<std::string, double> samples(const std::string& text) {
    std::map<std::string, double> out;
    std::istringstream in(text);
    std::string line;
    while (std::getline(in, line)) {
        if (line.empty() || line.front() == '#') continue;
        const auto space = line.rfind(' ');
        REQUIRE(space != std::string::npos);
        out[line.substr(0, space)] = std::stod(line.substr(space + 1));
    }
    return out;
}

double value(const std::map<std::string, double>& m, const std::string& key) {
    const auto it = m.find(key);
    return it == m.end() ? 0.0 : it->second;
}

std::string requests(const char* method, const char* status) {
    return std::string("tern_requests_total{method=\"") + method + "\",status=\"" + status + "\"}";
}

response scrape(const test_server& server) { return fetch(server, get_request("/metrics")); }

}  // namespace

TEST_CASE("a scrape counts requests by method and status class, and the histogram agrees",
          "[metrics]") {
    tern::config cfg = test_config();
    cfg.limits.max_header_count = 10;
    test_server server(
        [](tern::app& app) {
            app.metrics("/metrics");
            app.get("/ok", [](tern::context& ctx) { ctx.text("ok"); });
            app.post("/made", [](tern::context& ctx) { ctx.status(201).text("made"); });
            app.put("/boom", [](tern::context&) { throw std::runtime_error("boom"); });
            app.del("/gone", [](tern::context& ctx) { ctx.status(410); });
            app.get("/moved", [](tern::context& ctx) { ctx.redirect("/ok"); });
        },
        cfg);
    raw_client c = server.client();
    auto send = [&](const std::string& bytes) {
        c.send(bytes);
        return c.read_response();
    };
    for (int i = 0; i < 5; ++i) CHECK(send(get_request("/ok")).status == 200);
    for (int i = 0; i < 3; ++i) CHECK(send(body_request("POST", "/made", "x")).status == 201);
    for (int i = 0; i < 2; ++i) CHECK(send(body_request("PUT", "/boom", "")).status == 500);
    CHECK(send(body_request("DELETE", "/gone", "")).status == 410);
    CHECK(send(get_request("/moved")).status == 302);
    CHECK(send(get_request("/nowhere")).status == 404);
    c.send("HEAD /ok HTTP/1.1\r\nHost: localhost\r\n\r\n");
    CHECK(c.read_response(true).status == 200);
    CHECK(send("OPTIONS /ok HTTP/1.1\r\nHost: localhost\r\n\r\n").status == 204);
    // A method without a label of its own.
    CHECK(send("PROPFIND /ok HTTP/1.1\r\nHost: localhost\r\n\r\n").status == 405);
    // A request the connection refuses (over max_header_count) counts too, by its method.
    std::string many;
    for (int i = 0; i < 12; ++i) many += "X-H" + std::to_string(i) + ": v\r\n";
    CHECK(fetch(server, get_request("/ok", many)).status == 431);

    const auto r = scrape(server);
    REQUIRE(r.status == 200);
    CHECK(r.header("Content-Type") == "text/plain; version=0.0.4; charset=utf-8");
    INFO(r.body);
    const auto m = samples(r.body);
    CHECK(value(m, requests("GET", "2xx")) == 5);
    CHECK(value(m, requests("HEAD", "2xx")) == 1);
    CHECK(value(m, requests("OPTIONS", "2xx")) == 1);
    CHECK(value(m, requests("POST", "2xx")) == 3);
    CHECK(value(m, requests("PUT", "5xx")) == 2);
    CHECK(value(m, requests("DELETE", "4xx")) == 1);
    CHECK(value(m, requests("GET", "3xx")) == 1);
    CHECK(value(m, requests("GET", "4xx")) == 2);  // the 404 and the 431
    CHECK(value(m, requests("other", "4xx")) == 1);
    CHECK(m.count(requests("PROPFIND", "4xx")) == 0);
    double total = 0;
    for (const auto& [key, v] : m) {
        if (key.rfind("tern_requests_total{", 0) == 0) total += v;
    }
    CHECK(total == 17);  // the scrape itself is counted once it is answered
    // The histogram holds every answered request, cumulatively.
    CHECK(value(m, "tern_request_duration_seconds_count") == total);
    CHECK(value(m, "tern_request_duration_seconds_bucket{le=\"+Inf\"}") == total);
    double previous = 0;
    for (const char* le : {"0.001", "0.0025", "0.005", "0.01", "0.025", "0.05", "0.1", "0.25",
                           "0.5", "1", "2.5", "5", "10", "+Inf"}) {
        const auto key = std::string("tern_request_duration_seconds_bucket{le=\"") + le + "\"}";
        REQUIRE(m.count(key) == 1);
        CHECK(m.at(key) >= previous);
        previous = m.at(key);
    }
    CHECK(value(m, "tern_request_duration_seconds_sum") >= 0);
    CHECK(value(m, "tern_requests_in_flight") == 1);  // the scrape, while it runs
    CHECK(value(m, "tern_connections_open") >= 2);    // `c` and the scrape's
    CHECK(value(m, "tern_connections_accepted_total") == 3);
    CHECK(value(m, "tern_connections_refused_total") == 0);
    CHECK(value(m, "tern_bytes_received_total") > 0);
    CHECK(value(m, "tern_bytes_sent_total") > 0);
    CHECK(value(m, "tern_blocking_queue_length") == 0);
    CHECK(value(m, std::string("tern_build_info{version=\"") + tern::version() + "\"}") == 1);
    // Every metric has its HELP and TYPE lines.
    for (const char* name :
         {"tern_requests_total", "tern_request_duration_seconds", "tern_requests_in_flight",
          "tern_connections_open", "tern_connections_accepted_total",
          "tern_connections_refused_total", "tern_bytes_received_total", "tern_bytes_sent_total",
          "tern_blocking_queue_length", "tern_build_info"}) {
        CHECK(r.body.find(std::string("# HELP ") + name + " ") != std::string::npos);
        CHECK(r.body.find(std::string("# TYPE ") + name + " ") != std::string::npos);
    }

    // The next scrape sees the previous one and the bytes grow. An answer's bytes are counted
    // by its loop just after the send, so a scrape sent as soon as the client has read the
    // previous answer can run on another loop before that count lands (seen on a loaded
    // machine): the sent bytes are polled, through further scrapes.
    const auto again = samples(scrape(server).body);
    CHECK(value(again, requests("GET", "2xx")) == 6);
    CHECK(value(again, "tern_bytes_received_total") > value(m, "tern_bytes_received_total"));
    CHECK(eventually([&] {
        return value(samples(scrape(server).body), "tern_bytes_sent_total") >
               value(m, "tern_bytes_sent_total");
    }));
}

TEST_CASE("bytes received count exactly what a client sent", "[metrics]") {
    test_server server([](tern::app& app) {
        app.metrics("/metrics");
        app.post("/sink", [](tern::context& ctx) { ctx.text(std::to_string(ctx.body().size())); });
    });
    const auto before = samples(scrape(server).body);
    const std::string request = body_request("POST", "/sink", std::string(10000, 'x'));
    CHECK(fetch(server, request).body == "10000");
    const std::string scrape_request = get_request("/metrics");
    const auto after = samples(scrape(server).body);
    CHECK(value(after, "tern_bytes_received_total") - value(before, "tern_bytes_received_total") ==
          static_cast<double>(request.size() + scrape_request.size()));
}

TEST_CASE("requests in flight count held requests until they finish or their client leaves",
          "[metrics]") {
    std::mutex m;
    std::optional<tern::deferred> held;
    test_server server([&](tern::app& app) {
        app.metrics("/metrics");
        app.get("/hold", [&](tern::context& ctx) {
            std::lock_guard lock(m);
            held.emplace(ctx.defer());
        });
    });
    auto in_flight = [&] { return value(samples(scrape(server).body), "tern_requests_in_flight"); };
    CHECK(in_flight() == 1);
    raw_client waiting = server.client();
    waiting.send(get_request("/hold"));
    REQUIRE(eventually([&] {
        std::lock_guard lock(m);
        return held.has_value();
    }));
    CHECK(in_flight() == 2);
    {
        std::lock_guard lock(m);
        held->complete([](tern::context& c) { c.text("done"); });
        held.reset();
    }
    CHECK(waiting.read_response().body == "done");
    CHECK(in_flight() == 1);
    // A client that leaves while its request is held: out of flight, even while the
    // handle is kept.
    raw_client leaving = server.client();
    leaving.send(get_request("/hold"));
    REQUIRE(eventually([&] {
        std::lock_guard lock(m);
        return held.has_value();
    }));
    CHECK(in_flight() == 2);
    leaving.close();
    CHECK(eventually([&] { return in_flight() == 1; }));
    std::lock_guard lock(m);
    held.reset();
}

TEST_CASE("the blocking queue length shows requests waiting for a blocking thread", "[metrics]") {
    std::promise<void> release;
    std::shared_future<void> released = release.get_future().share();
    std::atomic<int> started{0};
    test_server server([&](tern::app& app) {
        app.metrics("/metrics");
        app.configure([](tern::config& c) { c.blocking.threads = 1; });
        app.get("/slow", tern::blocking([&](tern::context& ctx) {
                    ++started;
                    released.wait();
                    ctx.text("slow");
                }));
    });
    auto gauge = [&](const char* name) { return value(samples(scrape(server).body), name); };
    raw_client first = server.client();
    first.send(get_request("/slow"));
    REQUIRE(eventually([&] { return started.load() == 1; }));
    raw_client second = server.client();
    second.send(get_request("/slow"));
    CHECK(eventually([&] { return gauge("tern_blocking_queue_length") == 1; }));
    CHECK(gauge("tern_requests_in_flight") == 3);  // two slow ones and the scrape
    release.set_value();
    CHECK(first.read_response().body == "slow");
    CHECK(second.read_response().body == "slow");
    CHECK(gauge("tern_blocking_queue_length") == 0);
    CHECK(gauge("tern_requests_in_flight") == 1);
}

TEST_CASE("without app.metrics nothing is served at /metrics", "[metrics]") {
    test_server server;
    CHECK(fetch(server, get_request("/metrics")).status == 404);
}

TEST_CASE("app.metrics on a path already routed throws", "[metrics]") {
    tern::app app;
    app.get("/metrics", [](tern::context& ctx) { ctx.text("mine"); });
    CHECK_THROWS_AS(app.metrics("/metrics"), std::invalid_argument);
}

TEST_CASE("scrapes during requests on both threads never go backwards, and the end sums exactly",
          "[metrics]") {
    test_server server([](tern::app& app) {
        app.metrics("/metrics");
        app.get("/ok", [](tern::context& ctx) { ctx.text("ok"); });
    });
    constexpr int clients = 4;
    constexpr int per_client = 200;
    std::vector<std::thread> threads;
    for (int t = 0; t < clients; ++t) {
        threads.emplace_back([&server] {
            // A connection each: the kernel spreads them over both event loops.
            raw_client c = server.client();
            for (int i = 0; i < per_client; ++i) {
                c.send(get_request("/ok"));
                if (c.read_response().status != 200) return;
            }
        });
    }
    double last_ok = 0;
    double last_sent = 0;
    double last_count = 0;
    bool monotonic = true;
    for (int i = 0; i < 20; ++i) {
        const auto m = samples(scrape(server).body);
        const double ok = value(m, requests("GET", "2xx"));
        const double sent = value(m, "tern_bytes_sent_total");
        const double count = value(m, "tern_request_duration_seconds_count");
        monotonic = monotonic && ok >= last_ok && sent >= last_sent && count >= last_count;
        last_ok = ok;
        last_sent = sent;
        last_count = count;
    }
    for (auto& t : threads) t.join();
    CHECK(monotonic);
    const auto m = samples(scrape(server).body);
    // Every /ok, and the 20 scrapes before this one.
    CHECK(value(m, requests("GET", "2xx")) == clients * per_client + 20);
    CHECK(value(m, "tern_request_duration_seconds_count") == clients * per_client + 20);
    CHECK(value(m, "tern_requests_in_flight") == 1);
}

}  // namespace wire_test_metrics_wire

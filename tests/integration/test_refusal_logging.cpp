// Requests the connection refuses are logged with what of them was parsed
// (docs/logging.md): once the request line arrived whole, the logger sees its method,
// target and version, and the header fields complete by then; before that, nothing.

#include "support/test_server.hpp"

#include <catch2/catch.hpp>

#include <chrono>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace wire_test_refusal_logging {

using namespace tern_test;
using namespace std::chrono_literals;

namespace {

/// What a request logger saw of one request.
struct seen {
    std::string method, path, query, protocol, user_agent;
    int status = 0;
};

/// A server with small limits and short timeouts that records what its request logger
/// sees.
struct logged_server {
    std::mutex m;
    std::vector<seen> log;
    test_server server{
        [this](tern::app& app) {
            app.post("/p", [](tern::context& ctx) { ctx.text("ok"); });
            app.request_logger([this](const tern::context& ctx, std::chrono::nanoseconds) {
                std::lock_guard lock(m);
                log.push_back({std::string(ctx.method()), std::string(ctx.path()),
                               std::string(ctx.query_string()), std::string(ctx.protocol()),
                               std::string(ctx.header("User-Agent").value_or("")), ctx.status()});
            });
        },
        config()};

    static tern::config config() {
        tern::config cfg = test_config();
        cfg.limits.max_header_count = 4;
        cfg.limits.max_header_size = 256;
        cfg.limits.max_line_size = 64;
        cfg.limits.max_body_size = 8;
        cfg.timeouts.header = 300ms;
        cfg.timeouts.body_idle = 300ms;
        return cfg;
    }

    /// The first entry logged with `status` (the refused request; the alive checks log 200s).
    seen entry(int status) {
        // The logger runs on the connection's thread, just before the response is written,
        // so it has run by the time the client has read the response.
        std::lock_guard lock(m);
        for (const auto& e : log) {
            if (e.status == status) return e;
        }
        FAIL("nothing logged with status " << status);
        return {};
    }
};

const std::string line = "POST /p?q=1 HTTP/1.0\r\nUser-Agent: ua\r\n";

}  // namespace

TEST_CASE("a refusal after a whole request line is logged with that line",
          "[wire][logging][hardening]") {
    const wire_case c = GENERATE(values<wire_case>({
        {"431 by field count", line + "A: 1\r\nB: 2\r\nC: 3\r\nD: 4\r\n\r\n", 431},
        {"431 by header bytes", line + "A: " + std::string(300, 'a') + "\r\n\r\n", 431},
        {"413 by Content-Length", line + "Content-Length: 9\r\n\r\n123456789", 413},
        {"413 by chunked count",
         "POST /p?q=1 HTTP/1.1\r\nHost: x\r\nUser-Agent: ua\r\nTransfer-Encoding: chunked\r\n\r\n"
         "9\r\n123456789\r\n0\r\n\r\n",
         413},
        {"400 for a control byte in a field", line + "X: a\001b\r\n\r\n", 400},
        {"400 for obs-fold", line + "X: a\r\n b\r\n\r\n", 400},
        {"400 for a duplicate Content-Length",
         line + "Content-Length: 1\r\nContent-Length: 1\r\n\r\nx", 400},
        {"400 for an empty Transfer-Encoding", line + "Transfer-Encoding:\r\n\r\n", 400},
        {"501 for an unknown transfer coding",
         "POST /p?q=1 HTTP/1.1\r\nHost: x\r\nUser-Agent: ua\r\n"
         "Transfer-Encoding: gzip, chunked\r\n\r\n",
         501},
        {"417 for an unknown expectation", line + "Expect: magic\r\n\r\n", 417},
    }));
    INFO("case: " << c.name);
    logged_server s;
    expect_rejected(s.server, c.bytes, c.status);
    const seen e = s.entry(c.status);
    CHECK(e.method == "POST");
    CHECK(e.path == "/p");
    CHECK(e.query == "q=1");
    CHECK(e.protocol == (c.bytes.find("HTTP/1.0") != std::string::npos ? "HTTP/1.0" : "HTTP/1.1"));
    CHECK(e.user_agent == "ua");
}

TEST_CASE("a timeout after a whole request line is logged with that line",
          "[wire][logging][timeouts]") {
    const wire_case c = GENERATE(values<wire_case>({
        {"408 waiting for the rest of the headers", line + "X-Half: ab", 408},
        {"408 waiting for the body", line + "Content-Length: 5\r\n\r\nab", 408},
    }));
    INFO("case: " << c.name);
    logged_server s;
    raw_client client = s.server.client();
    client.send(c.bytes);
    const response r = client.read_response();
    CHECK(r.status == 408);
    check_closed_and_still_serving(client, r, s.server.port());
    const seen e = s.entry(408);
    CHECK(e.method == "POST");
    CHECK(e.path == "/p");
    CHECK(e.protocol == "HTTP/1.0");
    CHECK(e.user_agent == "ua");
}

TEST_CASE("a refusal before the request line is whole is logged without one",
          "[wire][logging][hardening]") {
    const wire_case c = GENERATE(values<wire_case>({
        {"414", "GET /" + std::string(100, 'a') + " HTTP/1.1\r\nHost: x\r\n\r\n", 414},
        {"501 for an unknown method", "FOO / HTTP/1.1\r\nHost: x\r\n\r\n", 501},
        {"505", "GET / HTTP/2.0\r\nHost: x\r\n\r\n", 505},
        {"400 for two spaces in the line", "GET  / HTTP/1.1\r\nHost: x\r\n\r\n", 400},
    }));
    INFO("case: " << c.name);
    logged_server s;
    expect_rejected(s.server, c.bytes, c.status);
    const seen e = s.entry(c.status);
    CHECK(e.method.empty());
    CHECK(e.path.empty());
}

}  // namespace wire_test_refusal_logging

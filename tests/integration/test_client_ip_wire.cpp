// The client's address behind trusted proxies over loopback (docs/proxies.md): 127.0.0.1
// trusted, its forwarding headers give ctx.ip(); untrusted, they are ignored. ctx.peer_ip()
// is always the connection's peer, and the access log writes ctx.ip().

#include "support/test_server.hpp"

#include <catch2/catch.hpp>

#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

namespace wire_test_client_ip_wire {

using namespace tern_test;

namespace {

void routes(tern::app& app) {
    app.get("/ip", [](tern::context& ctx) { ctx.text(ctx.ip() + "|" + ctx.peer_ip()); });
}

std::string ip_with(const test_server& server, const std::string& headers) {
    const auto r = fetch(server, get_request("/ip", headers));
    INFO(describe(r));
    CHECK(r.status == 200);
    return r.body;
}

}  // namespace

TEST_CASE("behind a trusted loopback proxy ctx.ip() is the client the headers name", "[proxies]") {
    test_server server([](tern::app& app) {
        app.trusted_proxies({"127.0.0.1", "10.0.0.0/8"});
        routes(app);
    });
    CHECK(ip_with(server, "") == "127.0.0.1|127.0.0.1");
    CHECK(ip_with(server, "X-Forwarded-For: 198.51.100.7\r\n") == "198.51.100.7|127.0.0.1");
    // The client's own leftmost value is not believed.
    CHECK(ip_with(server, "X-Forwarded-For: 1.1.1.1, 198.51.100.7, 10.0.0.2\r\n") ==
          "198.51.100.7|127.0.0.1");
    // Several lines, joined in order.
    CHECK(ip_with(server, "X-Forwarded-For: 1.1.1.1\r\nX-Forwarded-For: 198.51.100.8\r\n") ==
          "198.51.100.8|127.0.0.1");
    CHECK(ip_with(server, "X-Forwarded-For: garbage\r\n") == "127.0.0.1|127.0.0.1");
}

TEST_CASE(
    "behind a trusted proxy that writes X-Forwarded-For, a client's own Forwarded header "
    "never decides ctx.ip()",
    "[proxies]") {
    // What nginx with `proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for` sends
    // when the client wrote a Forwarded header itself: the client's header untouched, and
    // X-Forwarded-For with the client's real address appended (issue 31, item 1).
    test_server server([](tern::app& app) {
        app.trusted_proxies({"127.0.0.1", "10.0.0.0/8"});
        routes(app);
    });
    for (const char* forged :
         {"for=6.6.6.6", "for=\"[2001:db8::66]:1\"", "for=6.6.6.6, for=7.7.7.7", "for=10.0.0.1"}) {
        INFO(forged);
        const std::string fwd = std::string("Forwarded: ") + forged + "\r\n";
        CHECK(ip_with(server, fwd + "X-Forwarded-For: 198.51.100.7\r\n") ==
              "198.51.100.7|127.0.0.1");
        CHECK(ip_with(server, fwd) == "127.0.0.1|127.0.0.1");
    }
}

TEST_CASE("behind a trusted proxy that writes Forwarded, only Forwarded is read", "[proxies]") {
    test_server server([](tern::app& app) {
        app.trusted_proxies({"127.0.0.1", "10.0.0.0/8"}, tern::forwarding_header::forwarded);
        routes(app);
    });
    CHECK(ip_with(server, "Forwarded: for=\"[2001:db8:cafe::17]:4711\";proto=https\r\n") ==
          "2001:db8:cafe::17|127.0.0.1");
    CHECK(ip_with(server, "Forwarded: for=198.51.100.1, for=unknown\r\n") == "127.0.0.1|127.0.0.1");
    CHECK(ip_with(server, "X-Forwarded-For: 6.6.6.6\r\n") == "127.0.0.1|127.0.0.1");
    CHECK(ip_with(server, "X-Forwarded-For: 6.6.6.6\r\nForwarded: for=198.51.100.2\r\n") ==
          "198.51.100.2|127.0.0.1");
}

TEST_CASE("an untrusted peer's forwarding headers are ignored", "[proxies]") {
    test_server untrusted([](tern::app& app) {
        app.trusted_proxies({"10.0.0.0/8", "::1"});
        routes(app);
    });
    CHECK(ip_with(untrusted, "X-Forwarded-For: 198.51.100.7\r\n") == "127.0.0.1|127.0.0.1");
    CHECK(ip_with(untrusted, "Forwarded: for=198.51.100.7\r\n") == "127.0.0.1|127.0.0.1");
    test_server untrusted_fwd([](tern::app& app) {
        app.trusted_proxies({"10.0.0.0/8"}, tern::forwarding_header::forwarded);
        routes(app);
    });
    CHECK(ip_with(untrusted_fwd, "Forwarded: for=198.51.100.7\r\n") == "127.0.0.1|127.0.0.1");
    // Without trusted_proxies, nobody's are believed.
    test_server plain(routes);
    CHECK(ip_with(plain, "X-Forwarded-For: 198.51.100.7\r\n") == "127.0.0.1|127.0.0.1");
}

TEST_CASE("the access log and error answers see the forwarded client", "[proxies]") {
    std::mutex m;
    std::vector<std::string> lines;
    tern::config cfg = test_config();
    cfg.limits.max_header_count = 5;
    test_server server(
        [&](tern::app& app) {
            app.trusted_proxies({"127.0.0.1"});
            routes(app);
            app.request_logger(tern::access_log([&](std::string_view line) {
                std::lock_guard lock(m);
                lines.emplace_back(line);
            }));
        },
        cfg);
    CHECK(ip_with(server, "X-Forwarded-For: 198.51.100.9\r\n") == "198.51.100.9|127.0.0.1");
    std::string many = "X-Forwarded-For: 198.51.100.10\r\n";
    for (int i = 0; i < 6; ++i) many += "X-H" + std::to_string(i) + ": v\r\n";
    CHECK(fetch(server, get_request("/ip", many)).status == 431);
    std::lock_guard lock(m);
    REQUIRE(lines.size() == 2);
    CHECK(lines[0].rfind("198.51.100.9 - - [", 0) == 0);
    // The refusal saw the header before the count passed: its client too.
    CHECK(lines[1].rfind("198.51.100.10 - - [", 0) == 0);
}

TEST_CASE("a bad trusted proxy entry throws at setup", "[proxies]") {
    tern::app app;
    CHECK_THROWS_AS(app.trusted_proxies({"127.0.0.1", "10.0.0.0/40"}), std::invalid_argument);
    CHECK_THROWS_AS(app.trusted_proxies({"proxy.example"}), std::invalid_argument);
    CHECK_NOTHROW(app.trusted_proxies({"::1", "fd00::/8"}));
}

}  // namespace wire_test_client_ip_wire

// HTTP/3 on more than one worker (docs/http3.md, "Workers"): a UDP socket per worker on one
// port, the kernel spreading clients over them by address. A client whose address changes
// reaches another worker's socket with a connection that lives elsewhere: its datagrams are
// handed over, not answered with a stateless reset. And the cap on connections counts every
// worker's together. Over real UDP sockets with tests/support/quic_client. Built only with
// TERN_HTTP3.

#include <catch2/catch.hpp>

#include "support/quic_app.hpp"
#include "support/quic_client.hpp"

#include <tern/config.hpp>

#include <chrono>
#include <memory>
#include <system_error>
#include <vector>

namespace wire_test_quic_workers {

using namespace std::chrono_literals;
using tern_test::h3_body;
using tern_test::h3_fetch;
using tern_test::h3_status;
using tern_test::quic_app;
using tern_test::quic_client;
using tern_test::start_h3;

tern::config workers(unsigned n) {
    tern::config settings;
    settings.threads = n;
    return settings;
}

TEST_CASE(
    "quic workers: a client that moves to a new port keeps its connection, whichever "
    "worker's socket the kernel hands it to",
    "[http3]") {
    // With two sockets a move lands on the other worker's socket about half the time: 16
    // moves all landing on the connection's own has a chance of 1 in 65,536. Before the
    // hand-over, the first to land elsewhere got a stateless reset and ended the connection.
    // Two moves per connection: ngtcp2 0.12 closes a connection whose client moves a third
    // time within a few round trips with CONNECTION_ID_LIMIT_ERROR, on one worker as on two
    // (docs/http3.md, "Workers").
    quic_app server(workers(2));
    int moves = 0;
    for (int client = 0; client < 8; ++client) {
        quic_client c(server.port);
        start_h3(c);
        REQUIRE(h3_status(h3_fetch(c, "/").bytes) == 200);
        for (int move = 0; move < 2; ++move, ++moves) {
            INFO("client " << client << ", move " << move);
            // The server issues a spare connection ID after the handshake; a move needs one.
            REQUIRE(c.pump_until([&] { return c.migrate(); }, 5s));
            const auto s = h3_fetch(c, "/");
            CHECK(h3_status(s.bytes) == 200);
            CHECK(h3_body(s.bytes) == "hi");
        }
    }
    CHECK(moves == 16);
    CHECK(server.handled == 24);
    // Counted on both workers, summed by app.stats(): the moves made no new connections.
    const auto stats = server.app.stats();
    CHECK(stats.h3_connections == 8);
    CHECK(stats.h3_requests == 24);
    CHECK(stats.requests == 24);
}

TEST_CASE("quic workers: the cap on connections counts every worker's", "[http3]") {
    // Clients from different ports are spread over both workers' sockets; with a cap of one
    // connection, only the first gets in, whichever socket the others reach.
    auto settings = workers(2);
    settings.limits.max_concurrent_connections = 1;
    quic_app server(settings);
    quic_client first(server.port);
    start_h3(first);
    for (int i = 0; i < 6; ++i) {
        INFO("client " << i);
        quic_client other(server.port);
        CHECK_FALSE(other.handshake(700ms));
    }
    const auto s = h3_fetch(first, "/");
    CHECK(h3_status(s.bytes) == 200);
}

TEST_CASE("quic workers: a UDP port another server holds is refused at start, not shared",
          "[http3]") {
    // Every worker's socket sets SO_REUSEPORT, so a second server of the same user could
    // bind the port too, and the kernel would split the clients between the two.
    quic_app first;
    tern::app second;
    second.get("/", [](tern::context& ctx) { ctx.text("second"); });
    second.tls(first.files.cert, first.files.key);
    second.http3(first.port);
    CHECK_THROWS_AS(second.start("127.0.0.1", 0), std::system_error);
    // The first goes on serving.
    quic_client c(first.port);
    start_h3(c);
    CHECK(h3_body(h3_fetch(c, "/").bytes) == "hi");
}

}  // namespace wire_test_quic_workers

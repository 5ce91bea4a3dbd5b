// Half-open QUIC connections (docs/http3.md, "Half-open connections"): an Initial with a
// valid Retry token and then nothing makes a connection that waits for a ClientHello. Such
// connections have a cap of their own (`http3.max_handshakes`, across workers) and a
// shorter life (`http3.handshake_timeout`); a completed handshake gives its place back.
// Over real UDP sockets with tests/support/quic_client: a half-open connection is a client
// that sends its ClientHello and then nothing. Built only with TERN_HTTP3.

#include <catch2/catch.hpp>

#include "support/quic_app.hpp"
#include "support/quic_client.hpp"

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace wire_test_quic_half_open {

using namespace std::chrono_literals;
using tern_test::h3_fetch;
using tern_test::h3_status;
using tern_test::quic_app;
using tern_test::quic_client;
using tern_test::start_h3;

/// A client whose handshake the server waits for: its Initial (after the Retry) carries the
/// ClientHello, then it goes silent, so the server holds the connection, its TLS session
/// included, until the handshake timeout.
std::unique_ptr<quic_client> half_open(std::uint16_t port) {
    auto c = std::make_unique<quic_client>(port);
    REQUIRE(c->pump_until([&] { return c->retried(); }, 5s));
    // Everything it sends from now on is dropped, but for the Initial with the Retry's token
    // and the ClientHello, sent once by hand: what the server answers is never answered.
    c->divert(-1, 1'000'000);
    c->pump(0ms);
    c->send_first_initial_again();
    return c;
}

tern::config capped(std::size_t handshakes, std::chrono::milliseconds timeout) {
    tern::config settings;
    settings.threads = 2;  // the cap counts every worker's half-open connections together
    settings.http3.max_handshakes = handshakes;
    settings.http3.handshake_timeout = timeout;
    return settings;
}

TEST_CASE(
    "quic half-open: past http3.max_handshakes a client's Initial is dropped until the "
    "half-open connections time out at http3.handshake_timeout",
    "[http3]") {
    // Before: half-open connections counted only against max_concurrent_connections (10,000)
    // and lived 10 s (ngtcp2's default), so the real client got in at once.
    quic_app server(capped(20, 1500ms));
    std::vector<std::unique_ptr<quic_client>> attacker;
    for (int i = 0; i < 30; ++i) attacker.push_back(half_open(server.port));
    const auto opened = std::chrono::steady_clock::now();
    {
        quic_client c(server.port);
        CHECK_FALSE(c.handshake(800ms));
    }
    // The half-open ones end at their handshake timeout; then there is room again.
    std::this_thread::sleep_until(opened + 1500ms + 300ms);
    quic_client late(server.port);
    CHECK(late.handshake(5s));
}

TEST_CASE(
    "quic half-open: a completed handshake gives its place back, so http3.max_handshakes "
    "bounds only connections still in their handshake",
    "[http3]") {
    quic_app server(capped(1, 5s));
    std::vector<std::unique_ptr<quic_client>> clients;
    for (int i = 0; i < 5; ++i) {
        INFO("client " << i);
        clients.push_back(std::make_unique<quic_client>(server.port));
        // Answered: the server's side of the handshake has completed too (the client's
        // completes first), so its place is free before the next client starts.
        start_h3(*clients.back());
        REQUIRE(h3_status(h3_fetch(*clients.back(), "/").bytes) == 200);
    }
    // And one place taken by a half-open connection keeps the next client out.
    const auto attacker = half_open(server.port);
    quic_client refused(server.port);
    CHECK_FALSE(refused.handshake(800ms));
}

// Not a test: bench/h3-half-open.py's client (hidden, so ctest never runs it). It makes
// TERN_HALF_OPEN_COUNT half-open connections to 127.0.0.1:TERN_HALF_OPEN_PORT (or, with
// TERN_HALF_OPEN_KIND=established, connections that complete their handshake and GET "/"
// once, then stay idle), prints "half-open: ready" and holds them until its standard input
// closes.
TEST_CASE("bench: hold QUIC connections for bench/h3-half-open.py", "[.bench]") {
    const char* port_text = std::getenv("TERN_HALF_OPEN_PORT");
    const char* count = std::getenv("TERN_HALF_OPEN_COUNT");
    const char* kind = std::getenv("TERN_HALF_OPEN_KIND");
    REQUIRE(port_text != nullptr);
    REQUIRE(count != nullptr);
    const auto port = static_cast<std::uint16_t>(std::stoi(port_text));
    const bool established = kind != nullptr && std::string(kind) == "established";
    std::vector<std::unique_ptr<quic_client>> held;
    for (long i = 0; i < std::stol(count); ++i) {
        if (!established) {
            held.push_back(half_open(port));
            continue;
        }
        held.push_back(std::make_unique<quic_client>(port));
        start_h3(*held.back());
        REQUIRE(h3_fetch(*held.back(), "/").ended);
    }
    std::puts("half-open: ready");
    std::fflush(stdout);
    while (std::getchar() != EOF) {
    }
}

}  // namespace wire_test_quic_half_open

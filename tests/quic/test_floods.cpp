// Floods of streams and the idle timeout over a real UDP socket on 127.0.0.1 (docs/http3.md,
// "Hardening, row by row"): a tern::app serving HTTP/3 with a self-signed certificate, and
// tests/support/quic_client (ngtcp2's client, HTTP/3 bytes by hand) opening and holding
// streams as a hostile client would (streams opened and cancelled by the thousand:
// test_h3_rapid_reset.cpp). Built only with TERN_HTTP3.

#include <catch2/catch.hpp>

#include "support/quic_app.hpp"
#include "support/quic_client.hpp"

#include <tern/config.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace wire_test_quic_floods {

using namespace std::chrono_literals;
using tern_test::h3_body;
using tern_test::h3_fetch;
using tern_test::h3_get;
using tern_test::h3_status;
using tern_test::quic_app;
using tern_test::quic_client;
using tern_test::start_h3;

// Opens streams until the server's limit refuses one, sending on each a request head whose
// end never comes, so that each holds its stream open; at most `most` (a limit that never
// comes is a failure). Their IDs.
std::vector<std::int64_t> hold_streams(quic_client& c, std::size_t most) {
    std::vector<std::int64_t> open;
    for (std::int64_t id = c.open_bidi(); id >= 0; id = c.open_bidi()) {
        c.send(id, h3_get("/"), false);
        open.push_back(id);
        REQUIRE(open.size() <= most);
    }
    return open;
}

TEST_CASE("quic floods: the stream limit holds: the 101st stream waits until one closes",
          "[http3]") {
    quic_app server;
    quic_client c(server.port);
    start_h3(c);

    const auto open = hold_streams(c, 1000);
    CHECK(open.size() == 100);  // quic::connection_settings::max_streams_bidi
    CHECK(c.max_bidi_streams() == 100);
    // While none closes, the server allows none more (a wait for what must not come).
    CHECK_FALSE(c.pump_until([&] { return c.max_bidi_streams() > 100; }, 500ms));
    CHECK(c.open_bidi() == -1);

    // One request ends: it is answered, its stream closes, and one more may open.
    c.send(open.front(), {}, true);
    std::int64_t next = -1;
    CHECK(c.pump_until([&] { return (next = c.open_bidi()) >= 0; }, 10s));
    INFO(c.close_reason());
    CHECK(c.max_bidi_streams() == 101);
    const auto first = c.stream(open.front());
    CHECK(h3_status(first.bytes) == 200);
    CHECK(h3_body(first.bytes) == "hi");
    CHECK(c.open_bidi() == -1);

    // The new stream is served like any.
    REQUIRE(next >= 0);
    c.send(next, h3_get("/"), true);
    c.pump_until([&] { return c.stream(next).ended; }, 10s);
    CHECK(h3_status(c.stream(next).bytes) == 200);
}

TEST_CASE("quic floods: config http3.max_concurrent_streams sets the stream limit", "[http3]") {
    tern::config settings;
    settings.http3.max_concurrent_streams = 7;
    quic_app server(settings);
    quic_client c(server.port);
    start_h3(c);
    const auto open = hold_streams(c, 100);
    CHECK(open.size() == 7);
    CHECK(c.max_bidi_streams() == 7);
    // One ends, is answered, and its place is given back.
    c.send(open.front(), {}, true);
    CHECK(c.pump_until([&] { return c.max_bidi_streams() == 8; }, 10s));
    CHECK(h3_status(c.stream(open.front()).bytes) == 200);
}

TEST_CASE("quic floods: a silent connection is closed at the idle timeout", "[http3]") {
    // ngtcp2 closes an idle connection silently (RFC 9000 10.1), so the client cannot see the
    // server's close. What proves it is the server's room: with a cap of one connection, a
    // second client is refused while the first holds its place, and a third gets in once the
    // first has stayed silent past timeouts.keep_alive (the HTTP/3 idle timeout). The first
    // sends nothing meanwhile (it is not even pumped), so only its idle timeout on the
    // server can have freed the place.
    tern::config settings;
    settings.timeouts.keep_alive = 3s;
    settings.limits.max_concurrent_connections = 1;
    quic_app server(settings);

    quic_client silent(server.port);
    start_h3(silent);
    CHECK(h3_status(h3_fetch(silent, "/").bytes) == 200);
    {
        // Well within the idle timeout of the first's last packet: its Initial, after its
        // Retry, is dropped.
        quic_client second(server.port);
        CHECK_FALSE(second.handshake(1s));
        CHECK(second.retried());
    }

    quic_client third(server.port);
    const bool in = third.handshake(20s);
    INFO(third.close_reason());
    REQUIRE(in);
    start_h3(third);
    const auto answer = h3_fetch(third, "/");
    CHECK(h3_status(answer.bytes) == 200);
    CHECK(h3_body(answer.bytes) == "hi");
}

TEST_CASE("quic floods: an Initial sent again with its token lets no second connection in",
          "[http3]") {
    // Until a client hears from the server it sends to the connection ID the Retry gave it:
    // its Initial sent again (the answer lost) must reach the connection its token let in.
    // With a cap of two connections, a second one made for the copy would leave no room for
    // another client until its handshake timed out.
    tern::config settings;
    settings.limits.max_concurrent_connections = 2;
    quic_app server(settings);

    quic_client first(server.port);
    start_h3(first);
    for (int i = 0; i < 3; ++i) first.send_first_initial_again();
    CHECK(h3_status(h3_fetch(first, "/").bytes) == 200);

    quic_client other(server.port);
    const bool in = other.handshake(5s);
    INFO(other.close_reason());
    CHECK(in);
    if (in) {
        start_h3(other);
        CHECK(h3_status(h3_fetch(other, "/").bytes) == 200);
    }
}

}  // namespace wire_test_quic_floods

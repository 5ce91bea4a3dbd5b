// HTTP/3 bytes nghttp3 refuses close the connection with the HTTP/3 error code RFC 9114 names
// for them (docs/http3.md, "Hardening"), not with QUIC's INTERNAL_ERROR, and the server goes
// on serving other clients. Over a real UDP socket with tests/support/quic_client. Built only
// with TERN_HTTP3.

#include <catch2/catch.hpp>

#include "support/quic_app.hpp"
#include "support/quic_client.hpp"

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace wire_test_quic_h3_errors {

using namespace std::chrono_literals;
using tern_test::h3_control_stream;
using tern_test::h3_fetch;
using tern_test::h3_status;
using tern_test::quic_app;
using tern_test::quic_client;

TEST_CASE(
    "quic h3: a DATA frame on the control stream closes the connection with "
    "H3_FRAME_UNEXPECTED",
    "[http3]") {
    quic_app server;
    quic_client c(server.port);
    REQUIRE(c.handshake(10s));
    const auto control = c.open_uni();
    REQUIRE(control >= 0);
    auto bytes = h3_control_stream();
    bytes.insert(bytes.end(), {0x00, 0x00});  // DATA, empty: not for a control stream (7.2.1)
    c.send(control, bytes, false);
    CHECK(c.pump_until([&] { return c.closed(); }, 10s));
    // 0x105 = 261, as an application error (not QUIC's INTERNAL_ERROR, 0x1).
    CHECK(c.close_reason().find("code 261, application") != std::string::npos);
    INFO(c.close_reason());

    // Others are served on: over HTTP/3, as the handler sees it (ctx.protocol, the access log).
    quic_client other(server.port);
    tern_test::start_h3(other);
    const auto s = h3_fetch(other, "/protocol");
    CHECK(h3_status(s.bytes) == 200);
    CHECK(tern_test::h3_body(s.bytes) == "HTTP/3");
}

}  // namespace wire_test_quic_h3_errors

// config::proxy_protocol: a TCP load balancer's PROXY header (v1 or v2) before the client's
// bytes sets ctx.ip(); a connection without a valid one is closed unanswered, and the
// server keeps serving others.

#include <catch2/catch.hpp>
#include <chrono>
#include <string>
#include <thread>

#include "support/raw_client.hpp"
#include "support/test_certs.hpp"
#include "support/test_server.hpp"

namespace wire_test_proxy_protocol_wire {

using namespace tern_test;
using namespace std::chrono_literals;

namespace {

tern::config proxied(tern::config cfg = test_config()) {
    cfg.proxy_protocol = true;
    return cfg;
}

void routes(tern::app& app) {
    app.get("/ip", [](tern::context& ctx) { ctx.text(ctx.ip()); });
}

const std::string v1_header = "PROXY TCP4 203.0.113.7 192.0.2.1 51234 80\r\n";

std::string v2_ipv4_header() {
    std::string h("\r\n\r\n\0\r\nQUIT\n", 12);
    h += std::string("\x21\x11\x00\x0C", 4);
    h += std::string("\xC6\x33\x64\x05\xC0\x00\x02\x01\xC8\x22\x00\x50", 12);  // 198.51.100.5
    return h;
}

// The server answers a client that sends a good header (it keeps serving after abuse).
void still_serves(const test_server& server) {
    raw_client c = server.client();
    c.send(v1_header + get_request("/ip"));
    const auto r = c.read_response();
    CHECK(r.status == 200);
    CHECK(r.body == "203.0.113.7");
}

}  // namespace

TEST_CASE(
    "proxy protocol v1: the header's source is ctx.ip(), for every request on the "
    "connection",
    "[wire][proxy]") {
    test_server server(routes, proxied());
    raw_client c = server.client();
    c.send(v1_header + get_request("/ip"));
    CHECK(c.read_response().body == "203.0.113.7");
    c.send(get_request("/ip"));
    CHECK(c.read_response().body == "203.0.113.7");
}

TEST_CASE("proxy protocol v2: the binary header's source is ctx.ip()", "[wire][proxy]") {
    test_server server(routes, proxied());
    raw_client c = server.client();
    c.send(v2_ipv4_header() + get_request("/ip"));
    CHECK(c.read_response().body == "198.51.100.5");
}

TEST_CASE("proxy protocol: a header sent in pieces is put together", "[wire][proxy]") {
    test_server server(routes, proxied());
    raw_client c = server.client();
    const std::string bytes = v2_ipv4_header() + get_request("/ip");
    for (std::size_t i = 0; i < 30; i += 7) {
        c.send(bytes.substr(i, 7));
        std::this_thread::sleep_for(20ms);
    }
    c.send(bytes.substr(35));
    CHECK(c.read_response().body == "198.51.100.5");
}

TEST_CASE("proxy protocol: UNKNOWN and LOCAL keep the peer's address", "[wire][proxy]") {
    test_server server(routes, proxied());
    raw_client c = server.client();
    c.send("PROXY UNKNOWN\r\n" + get_request("/ip"));
    CHECK(c.read_response().body == "127.0.0.1");
    raw_client local = server.client();
    local.send(std::string("\r\n\r\n\0\r\nQUIT\n\x20\x00\x00\x00", 16) + get_request("/ip"));
    CHECK(local.read_response().body == "127.0.0.1");
}

TEST_CASE("proxy protocol: a connection without a valid header is closed unanswered",
          "[wire][proxy]") {
    test_server server(routes, proxied());
    for (const std::string& bad : {
             get_request("/ip"),  // no header at all
             std::string("PROXY TCP4 1.2.3.4 5.6.7.8 1 2 3\r\n") + get_request("/ip"),
             std::string("PROXY TCP4 ") + std::string(200, '9'),       // too long
             std::string("\r\n\r\n\0\r\nQUIT\n\x31\x11\x00\x0C", 16),  // version 3
             // A NUL after the source address (issue 31, item 6).
             std::string("PROXY TCP4 6.6.6.6\0 5.6.7.8 1 2\r\n", 33) + get_request("/ip"),
         }) {
        INFO(bad.substr(0, 40));
        raw_client c = server.client();
        c.send(bad);
        CHECK(c.closed_by_peer());
        CHECK(c.buffered().empty());
    }
    still_serves(server);
}

TEST_CASE("proxy protocol: a header that never completes is closed at the header deadline",
          "[wire][proxy]") {
    auto cfg = proxied();
    cfg.timeouts.header = 300ms;
    test_server server(routes, cfg);
    raw_client c = server.client();
    c.send("PROXY TCP4 203.0.");
    CHECK(c.closed_by_peer(5s));
    still_serves(server);
}

TEST_CASE("proxy protocol before TLS: the header, then the handshake", "[wire][proxy][tls]") {
    static const test_ca ca;
    auto cfg = proxied();
    cfg.tls.emplace();
    const auto leaf = ca.issue({"localhost"});
    tern::tls_certificate cert;
    cert.cert_pem = leaf.cert_pem;
    cert.key_pem = leaf.key_pem;
    cfg.tls->certificates = {cert};
    test_server server(routes, cfg);
    raw_client c = server.client();
    c.send(v1_header);
    tls_options o;
    o.server_name = "localhost";
    o.ca_pem = ca.cert_pem();
    o.alpn = {"http/1.1"};
    REQUIRE(c.start_tls(o));
    c.send(get_request("/ip"));
    CHECK(c.read_response().body == "203.0.113.7");
}

TEST_CASE("without proxy_protocol a PROXY line is a bad request", "[wire][proxy]") {
    test_server server(routes);
    raw_client c = server.client();
    c.send(v1_header + get_request("/ip"));
    CHECK(c.read_response().status == 400);
}

}  // namespace wire_test_proxy_protocol_wire

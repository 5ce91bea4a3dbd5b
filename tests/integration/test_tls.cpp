// HTTPS over real sockets: the handshake, what is refused (old versions, garbage, plain
// HTTP, a client offering only protocols tern does not speak), the handshake's deadlines
// and cap, SNI, certificate loading and reload, and requests, bodies and files over TLS
// (docs/tls.md). The client is raw_client with OpenSSL (tests/support/raw_client.hpp); the
// certificates are made per test by a throwaway CA (tests/support/test_certs.hpp).

#include <catch2/catch.hpp>

#include <openssl/ssl.h>

#include <chrono>
#include <string>
#include <thread>

#include "support/eventually.hpp"
#include "support/raw_client.hpp"
#include "support/temp_dir.hpp"
#include "support/test_certs.hpp"
#include "support/test_server.hpp"
#include "support/ws_client.hpp"

namespace wire_test_tls {

using namespace std::chrono_literals;
using tern_test::raw_client;
using tern_test::test_server;

namespace {

// One CA for the file: issuing is cheap, making a CA a little less so.
const tern_test::test_ca& ca() {
    static const tern_test::test_ca the_ca;
    return the_ca;
}

tern::tls_certificate in_memory(const tern_test::pem_pair& pair) {
    tern::tls_certificate c;
    c.cert_pem = pair.cert_pem;
    c.key_pem = pair.key_pem;
    return c;
}

tern::config tls_config_with(std::vector<tern::tls_certificate> certs) {
    auto cfg = tern_test::test_config();
    cfg.tls.emplace();
    cfg.tls->certificates = std::move(certs);
    return cfg;
}

tern::config localhost_tls() { return tls_config_with({in_memory(ca().issue({"localhost"}))}); }

tern_test::tls_options verified(std::string server_name = "localhost") {
    tern_test::tls_options o;
    o.server_name = std::move(server_name);
    o.ca_pem = ca().cert_pem();
    o.alpn = {"http/1.1"};
    return o;
}

// A TLS client connected to `port` with `options`; fails the test when the handshake fails.
raw_client tls_client(std::uint16_t port, const tern_test::tls_options& options = verified()) {
    raw_client c(port);
    const bool ok = c.start_tls(options);
    INFO(c.tls_error());
    REQUIRE(ok);
    return c;
}

// The server still serves a fresh, well-behaved TLS client.
void still_serves(std::uint16_t port) {
    auto c = tls_client(port);
    c.send(tern_test::get_request(tern_test::alive_path));
    const auto r = c.read_response();
    CHECK(r.status == 200);
    CHECK(r.body == "alive");
}

// As still_serves, with `options` (e.g. a client certificate).
void still_serves_with(std::uint16_t port, const tern_test::tls_options& options) {
    auto c = tls_client(port, options);
    c.send(tern_test::get_request(tern_test::alive_path));
    CHECK(c.read_response().status == 200);
}

}  // namespace

TEST_CASE("tls: a request over TLS 1.3 and over TLS 1.2 is answered as over plain HTTP", "[tls]") {
    test_server server(
        [](tern::app& app) {
            app.get("/hi", [](tern::context& ctx) { ctx.text("hi over tls"); });
            app.get("/scheme", [](tern::context& ctx) { ctx.text(std::string(ctx.scheme())); });
        },
        localhost_tls());
    auto tls13 = tls_client(server.port());
    CHECK(tls13.tls_version() == "TLSv1.3");
    CHECK(tls13.tls_alpn() == "http/1.1");
    // Keep-alive and a pipelined pair on the same session.
    tls13.send(tern_test::get_request("/hi"));
    CHECK(tls13.read_response().body == "hi over tls");
    tls13.send(tern_test::get_request("/hi") + tern_test::get_request("/hi"));
    CHECK(tls13.read_response().body == "hi over tls");
    CHECK(tls13.read_response().body == "hi over tls");
    tls13.send(tern_test::get_request("/scheme"));
    CHECK(tls13.read_response().body == "https");

    auto o = verified();
    o.max_version = TLS1_2_VERSION;
    auto tls12 = tls_client(server.port(), o);
    CHECK(tls12.tls_version() == "TLSv1.2");
    CHECK(tls12.tls_cipher().find("GCM") != std::string::npos);
    tls12.send(tern_test::get_request("/hi"));
    CHECK(tls12.read_response().body == "hi over tls");
    CHECK(server.app().stats().tls_handshakes >= 2);
}

TEST_CASE("tls: Connection close ends with close_notify", "[tls]") {
    test_server server({}, localhost_tls());
    auto c = tls_client(server.port());
    c.send(tern_test::get_request(tern_test::alive_path, "Connection: close\r\n"));
    CHECK(c.read_response().status == 200);
    CHECK(c.closed_by_peer());
    CHECK(c.tls_close_notify_received());
}

TEST_CASE("tls: TLS 1.0 and 1.1 hellos are refused and counted while others are served", "[tls]") {
    test_server server({}, localhost_tls());
    for (const int version : {TLS1_VERSION, TLS1_1_VERSION}) {
        raw_client old(server.port());
        auto o = verified();
        o.min_version = version;
        o.max_version = version;
        CHECK_FALSE(old.start_tls(o));
        INFO(old.tls_error());
        CHECK(old.tls_error().find("protocol version") != std::string::npos);
        CHECK(old.closed_by_peer());
    }
    CHECK(tern_test::eventually([&] { return server.app().stats().tls_handshake_failures >= 2; }));
    still_serves(server.port());
}

TEST_CASE("tls: the modern profile refuses TLS 1.2", "[tls]") {
    auto cfg = localhost_tls();
    cfg.tls->profile = tern::tls_profile::modern;
    test_server server({}, cfg);
    raw_client c(server.port());
    auto o = verified();
    o.max_version = TLS1_2_VERSION;
    CHECK_FALSE(c.start_tls(o));
    still_serves(server.port());
}

TEST_CASE("tls: garbage instead of a ClientHello is closed without hurting others", "[tls]") {
    test_server server({}, localhost_tls());
    for (const std::string& garbage :
         {std::string("\x16\x03\x01\x00\x04hell", 9), std::string(64, '\0'),
          std::string("\x80\x2e\x01\x00\x02\x00\x15\x00\x00\x00\x10", 11) + std::string(40, 'x')}) {
        raw_client c(server.port());
        c.send(garbage);
        CHECK(c.closed_by_peer());
    }
    CHECK(tern_test::eventually([&] { return server.app().stats().tls_handshake_failures >= 1; }));
    still_serves(server.port());
}

TEST_CASE("tls: a plain HTTP request on the HTTPS port gets a plain-text 400", "[tls]") {
    test_server server({}, localhost_tls());
    raw_client c(server.port());
    c.send(tern_test::get_request("/"));
    const auto r = c.read_response();
    CHECK(r.status == 400);
    CHECK(r.body.find("HTTPS") != std::string::npos);
    CHECK(c.closed_by_peer());
    still_serves(server.port());
}

TEST_CASE("tls: a client offering only protocols tern does not speak by ALPN is refused", "[tls]") {
    test_server server({}, localhost_tls());
    auto o = verified();
    o.alpn = {"spdy/3", "h3"};
    raw_client c(server.port());
    CHECK_FALSE(c.start_tls(o));
    CHECK(c.tls_error().find("no application protocol") != std::string::npos);
    // Offering none at all is fine: ALPN is optional.
    o.alpn.clear();
    auto none = tls_client(server.port(), o);
    CHECK(none.tls_alpn().empty());
    // tern prefers h2 whatever the client's order (the HTTP/2 tests use it).
    o.alpn = {"http/1.1", "h2"};
    auto both = tls_client(server.port(), o);
    CHECK(both.tls_alpn() == "h2");
    o.alpn = {"http/1.1"};
    auto one = tls_client(server.port(), o);
    CHECK(one.tls_alpn() == "http/1.1");
}

TEST_CASE("tls: with HTTP/2 off, ALPN picks http/1.1 and a client offering only h2 is refused",
          "[tls]") {
    tern::config cfg = localhost_tls();
    cfg.http2.enabled = false;
    test_server server({}, cfg);
    auto o = verified();
    o.alpn = {"h2", "http/1.1"};
    auto both = tls_client(server.port(), o);
    CHECK(both.tls_alpn() == "http/1.1");
    o.alpn = {"h2"};
    raw_client c(server.port());
    CHECK_FALSE(c.start_tls(o));
    CHECK(c.tls_error().find("no application protocol") != std::string::npos);
}

TEST_CASE("tls: a client that connects and sends nothing is closed at the first-byte deadline",
          "[tls][timeouts]") {
    auto cfg = localhost_tls();
    cfg.timeouts.first_byte = 300ms;
    test_server server({}, cfg);
    raw_client silent(server.port());
    CHECK(silent.closed_by_peer(3000ms));
    still_serves(server.port());
}

TEST_CASE("tls: a trickled ClientHello is closed at the header deadline", "[tls][timeouts]") {
    auto cfg = localhost_tls();
    cfg.timeouts.first_byte = 5000ms;
    cfg.timeouts.header = 600ms;
    test_server server({}, cfg);
    const std::string hello = tern_test::tls_client_hello(verified());
    REQUIRE(hello.size() > 100);
    raw_client slow(server.port());
    const auto began = std::chrono::steady_clock::now();
    bool closed = false;
    // One byte every 50 ms would take the hello several seconds; the server ends it first.
    for (std::size_t i = 0; i < hello.size() && !closed; ++i) {
        try {
            slow.send(hello.substr(i, 1));
        } catch (const tern_test::client_error&) {
            closed = true;  // reset: the server has closed
            break;
        }
        closed = slow.closed_by_peer(50ms);
    }
    CHECK(closed);
    CHECK(std::chrono::steady_clock::now() - began < 4000ms);
    still_serves(server.port());
}

TEST_CASE(
    "tls: hellos begun over max_handshakes are closed at once, silent connections take no slot",
    "[tls]") {
    auto cfg = localhost_tls();
    cfg.threads = 1;  // one worker, so the cap is the server's
    cfg.tls->max_handshakes = 2;
    test_server server({}, cfg);
    // Silent connections take no slot: a client can still complete its handshake.
    raw_client silent1(server.port());
    raw_client silent2(server.port());
    raw_client silent3(server.port());
    CHECK(tern_test::eventually([&] { return server.app().stats().connections_accepted >= 3; }));
    {
        raw_client c(server.port());
        CHECK(c.start_tls(verified()));
    }
    // Two hellos begun and stalled (a record header, then nothing) take both slots.
    constexpr std::string_view record_start = "\x16\x03\x01\x02\x00";
    raw_client first(server.port());
    raw_client second(server.port());
    first.send(record_start);
    second.send(record_start);
    // A third whose hello begins now is closed at once, counted as refused.
    CHECK(tern_test::eventually([&] {
        raw_client third(server.port());
        third.send(record_start);
        return third.closed_by_peer(2000ms);
    }));
    CHECK(server.app().stats().connections_refused >= 1);
    CHECK_FALSE(silent1.closed_by_peer(100ms));  // untouched by the refusals
    first.close();
    second.close();
    // The slots come back when those connections end.
    CHECK(tern_test::eventually([&] {
        raw_client c(server.port());
        return c.start_tls(verified());
    }));
    still_serves(server.port());
}

TEST_CASE("tls: SNI picks the certificate by name and the first one is the default", "[tls]") {
    const auto a = ca().issue({"a.test"});
    const auto b = ca().issue({"b.test", "*.wild.test"});
    auto named = in_memory(ca().issue({"c.test"}));
    named.server_names = {"C.Named.Test"};
    test_server server({}, tls_config_with({in_memory(a), in_memory(b), named}));
    const auto serial_for = [&](const std::string& name) {
        tern_test::tls_options o;
        o.server_name = name;
        o.ca_pem = ca().cert_pem();
        auto c = tls_client(server.port(), o);
        return tern_test::serial_hex(c.tls_peer_cert_pem());
    };
    CHECK(serial_for("b.test") == tern_test::serial_hex(b.cert_pem));
    CHECK(serial_for("B.TEST") == tern_test::serial_hex(b.cert_pem));
    CHECK(serial_for("x.wild.test") == tern_test::serial_hex(b.cert_pem));
    CHECK(serial_for("y.x.wild.test") == tern_test::serial_hex(a.cert_pem));  // one label only
    CHECK(serial_for("a.test") == tern_test::serial_hex(a.cert_pem));
    CHECK(serial_for("unknown.test") == tern_test::serial_hex(a.cert_pem));
    CHECK(serial_for("") == tern_test::serial_hex(a.cert_pem));
    CHECK(serial_for("c.named.test") == tern_test::serial_hex(named.cert_pem));
    CHECK(serial_for("c.test") ==
          tern_test::serial_hex(a.cert_pem));  // names given replace the SANs
}

TEST_CASE("tls: bodies and files of every size go out whole through TLS", "[tls]") {
    tern_test::temp_dir dir;
    std::string file(3 * 1024 * 1024 + 17, '\0');
    for (std::size_t i = 0; i < file.size(); ++i) file[i] = static_cast<char>('a' + i % 26);
    {
        dir.write("big.txt", file);
        dir.write("small.txt", "small file");
    }
    const std::string big_body(700 * 1024, 'z');
    auto cfg = localhost_tls();
    test_server server(
        [&](tern::app& app) {
            app.static_files(dir.path.string());
            app.get("/body", [&](tern::context& ctx) { ctx.text(big_body); });
            app.post("/echo", [](tern::context& ctx) { ctx.text(std::string(ctx.body())); });
        },
        cfg);
    auto c = tls_client(server.port());
    c.send(tern_test::get_request("/big.txt"));
    auto r = c.read_response(false, 20000ms);
    CHECK(r.status == 200);
    CHECK(r.body.size() == file.size());
    CHECK(r.body == file);
    c.send(tern_test::get_request("/small.txt"));
    CHECK(c.read_response().body == "small file");
    c.send(tern_test::get_request("/body"));
    CHECK(c.read_response(false, 20000ms).body == big_body);
    const std::string upload(300 * 1024, 'u');
    c.send(tern_test::body_request("POST", "/echo", upload));
    CHECK(c.read_response(false, 20000ms).body == upload);
}

TEST_CASE(
    "tls: a file larger than the socket buffers reaches a client that reads late, whole and in "
    "order",
    "[tls]") {
    // 12 MiB is more than loopback's largest send and receive buffers together (4 + 6 MiB),
    // so the server's writes of the file stop for the full socket, mid-piece, and go on.
    tern_test::temp_dir dir;
    std::string file(12 * 1024 * 1024 + 5, '\0');
    for (std::size_t i = 0; i < file.size(); ++i) {
        file[i] = static_cast<char>('a' + (i / 7 + i % 13) % 26);
    }
    dir.write("huge.txt", file);
    test_server server([&](tern::app& app) { app.static_files(dir.path.string()); },
                       localhost_tls());
    auto c = tls_client(server.port());
    c.send(tern_test::get_request("/huge.txt"));
    std::this_thread::sleep_for(500ms);  // the client reads nothing for a while
    auto r = c.read_response(false, 30000ms);
    CHECK(r.status == 200);
    CHECK(r.body.size() == file.size());
    CHECK(r.body == file);
    still_serves(server.port());
}

TEST_CASE("tls: certificates from files and an encrypted key load and serve", "[tls]") {
    tern_test::temp_dir dir;
    const auto pair = ca().issue({"localhost"});
    const auto cert = (dir.path / "cert.pem").string();
    const auto key = (dir.path / "key.pem").string();
    tern_test::write_file(cert, pair.cert_pem + ca().cert_pem());  // leaf, then the chain
    tern_test::write_file(key, tern_test::encrypt_key_pem(pair.key_pem, "s3cret"));
    auto cfg = tern_test::test_config();
    cfg.tls.emplace();
    cfg.tls->certificates.push_back({});
    cfg.tls->certificates.back().cert_file = cert;
    cfg.tls->certificates.back().key_file = key;
    cfg.tls->certificates.back().password = "s3cret";
    test_server server({}, cfg);
    still_serves(server.port());

    auto wrong = cfg;
    wrong.tls->certificates.back().password = "wrong";
    tern::app bad(wrong);
    CHECK_THROWS_WITH(bad.start("127.0.0.1", 0), Catch::Contains("key"));
}

TEST_CASE("tls: a certificate that cannot be loaded is an error at start that names it", "[tls]") {
    tern::app app;
    app.tls("/nonexistent/cert.pem", "/nonexistent/key.pem");
    CHECK_THROWS_WITH(app.start("127.0.0.1", 0), Catch::Contains("/nonexistent/cert.pem"));
    // The settings themselves are checked when they are given.
    tern::app other;
    CHECK_THROWS_AS(other.tls(tern::tls_config{}), std::invalid_argument);
    const auto pair = ca().issue({"localhost"});
    tern::tls_config mismatched;
    mismatched.certificates.push_back(in_memory(pair));
    mismatched.certificates.back().key_pem = ca().issue({"other"}).key_pem;
    tern::app third;
    third.tls(mismatched);
    CHECK_THROWS_WITH(third.start("127.0.0.1", 0), Catch::Contains("mismatch"));
    // An OCSP response that is not one is refused at start too, naming the file.
    tern_test::temp_dir dir;
    const auto garbage = (dir.path / "resp.der").string();
    tern_test::write_file(garbage, "not DER");
    tern::tls_config stapled;
    stapled.certificates.push_back(in_memory(pair));
    stapled.certificates.back().ocsp_response_file = garbage;
    tern::app fourth;
    fourth.tls(stapled);
    CHECK_THROWS_WITH(fourth.start("127.0.0.1", 0), Catch::Contains("resp.der"));
}

TEST_CASE("tls: reload_tls serves new certificates to new connections and keeps open ones",
          "[tls]") {
    tern_test::temp_dir dir;
    const auto cert = (dir.path / "cert.pem").string();
    const auto key = (dir.path / "key.pem").string();
    const auto first = ca().issue({"localhost"});
    tern_test::write_file(cert, first.cert_pem);
    tern_test::write_file(key, first.key_pem);
    auto cfg = tern_test::test_config();
    test_server server([&](tern::app& app) { app.tls(cert, key); }, cfg);

    auto open = tls_client(server.port());
    CHECK(tern_test::serial_hex(open.tls_peer_cert_pem()) == tern_test::serial_hex(first.cert_pem));

    const auto second = ca().issue({"localhost"});
    tern_test::write_file(cert, second.cert_pem);
    tern_test::write_file(key, second.key_pem);
    server.app().reload_tls();
    CHECK(tern_test::eventually([&] {
        auto c = tls_client(server.port());
        return tern_test::serial_hex(c.tls_peer_cert_pem()) ==
               tern_test::serial_hex(second.cert_pem);
    }));
    // The connection opened before the reload goes on with its session.
    open.send(tern_test::get_request(tern_test::alive_path));
    CHECK(open.read_response().status == 200);

    // A reload that cannot load the files throws and leaves the last good certificates.
    tern_test::write_file(cert, "not a certificate");
    CHECK_THROWS_AS(server.app().reload_tls(), std::invalid_argument);
    auto after = tls_client(server.port());
    CHECK(tern_test::serial_hex(after.tls_peer_cert_pem()) ==
          tern_test::serial_hex(second.cert_pem));
}

TEST_CASE("tls: a WebSocket, an SSE stream and a streamed body work over TLS", "[tls][ws][sse]") {
    test_server server(
        [](tern::app& app) {
            app.ws("/echo", [](tern::ws_handlers& ws) {
                ws.on_message([](tern::ws_connection& c, std::string_view text) { c.send(text); });
            });
            app.sse("/events", [](tern::context&, tern::sse_client client) {
                client.send("one");
                client.send("two", "update", "2");
                client.close();
            });
            app.get("/stream", [](tern::context& ctx) {
                ctx.content_type("text/plain");
                auto out = ctx.stream();
                for (int i = 0; i < 100; ++i)
                    out.write(std::string(1000, static_cast<char>('a' + i % 26)));
                out.end();
            });
        },
        localhost_tls());

    tern_test::ws_client ws(tls_client(server.port()), "/echo");
    REQUIRE(ws.handshake.status == 101);
    ws.send_text("hello over wss");
    const auto frame = ws.read_frame();
    REQUIRE(frame);
    CHECK(frame->payload == "hello over wss");
    const std::string big(200 * 1024, 'w');
    ws.send_text(big);
    const auto echoed = ws.read_frame(10000ms);
    REQUIRE(echoed);
    CHECK(echoed->payload == big);
    ws.send(tern_test::client_close(1000, "bye"));
    CHECK(ws.read_close_code() == 1000);

    auto sse = tls_client(server.port());
    sse.send(tern_test::get_request("/events"));
    const auto events = sse.read_response();
    CHECK(events.header("Content-Type") == "text/event-stream");
    CHECK(events.body == "data: one\n\nevent: update\nid: 2\ndata: two\n\n");

    auto streamed = tls_client(server.port());
    streamed.send(tern_test::get_request("/stream"));
    const auto body = streamed.read_response(false, 10000ms);
    CHECK(body.header("Transfer-Encoding") == "chunked");
    REQUIRE(body.body.size() == 100 * 1000);
    CHECK(body.body.substr(99 * 1000) == std::string(1000, static_cast<char>('a' + 99 % 26)));
}

TEST_CASE("tls: required client certificates are verified and their subject is on the context",
          "[tls]") {
    tern_test::temp_dir dir;
    const auto ca_file = (dir.path / "clients-ca.pem").string();
    tern_test::write_file(ca_file, ca().cert_pem());
    auto cfg = localhost_tls();
    cfg.tls->client_certificates = tern::client_certificates::required;
    cfg.tls->client_ca_file = ca_file;
    test_server server(
        [](tern::app& app) {
            app.get("/who",
                    [](tern::context& ctx) { ctx.text(std::string(ctx.client_certificate())); });
        },
        cfg);
    const auto alice = ca().issue({"alice"}, {}, tern_test::key_kind::ec_p256, true);
    auto o = verified();
    o.client_cert_pem = alice.cert_pem;
    o.client_key_pem = alice.key_pem;
    auto c = tls_client(server.port(), o);
    c.send(tern_test::get_request("/who"));
    CHECK(c.read_response().body == "CN=alice");

    // No certificate: refused (TLS 1.3 says so after the client's Finished, at the first
    // read; TLS 1.2 in the handshake).
    for (const int version : {TLS1_3_VERSION, TLS1_2_VERSION}) {
        raw_client none(server.port());
        auto plain = verified();
        plain.max_version = version;
        if (none.start_tls(plain)) {
            // The refusal may already have closed the connection: the send or the read fails.
            CHECK_THROWS([&] {
                none.send(tern_test::get_request("/who"));
                none.read_response();
            }());
        }
        INFO(none.tls_error());
        if (version == TLS1_2_VERSION) {
            CHECK(none.tls_error().find("handshake failure") != std::string::npos);
        }
        // Either way the server refused the handshake, and counted it.
        const auto refused = static_cast<std::uint64_t>(version == TLS1_3_VERSION ? 1 : 2);
        CHECK(tern_test::eventually(
            [&] { return server.app().stats().tls_handshake_failures >= refused; }));
    }
    // A certificate from another CA: refused the same way.
    const tern_test::test_ca stranger("someone else's CA");
    const auto mallory = stranger.issue({"mallory"}, {}, tern_test::key_kind::ec_p256, true);
    raw_client foreign(server.port());
    auto fo = verified();
    fo.client_cert_pem = mallory.cert_pem;
    fo.client_key_pem = mallory.key_pem;
    if (foreign.start_tls(fo)) {
        CHECK_THROWS([&] {
            foreign.send(tern_test::get_request("/who"));
            foreign.read_response();
        }());
    }
    CHECK(tern_test::eventually([&] { return server.app().stats().tls_handshake_failures >= 3; }));
    still_serves_with(server.port(), o);
}

TEST_CASE("tls: optional client certificates leave the subject empty when none is sent", "[tls]") {
    tern_test::temp_dir dir;
    const auto ca_file = (dir.path / "clients-ca.pem").string();
    tern_test::write_file(ca_file, ca().cert_pem());
    auto cfg = localhost_tls();
    cfg.tls->client_certificates = tern::client_certificates::optional;
    cfg.tls->client_ca_file = ca_file;
    test_server server(
        [](tern::app& app) {
            app.get("/who", [](tern::context& ctx) {
                ctx.text("[" + std::string(ctx.client_certificate()) + "]");
            });
        },
        cfg);
    auto anonymous = tls_client(server.port());
    anonymous.send(tern_test::get_request("/who"));
    CHECK(anonymous.read_response().body == "[]");
    const auto bob = ca().issue({"bob"}, {}, tern_test::key_kind::ec_p256, true);
    auto o = verified();
    o.client_cert_pem = bob.cert_pem;
    o.client_key_pem = bob.key_pem;
    auto named = tls_client(server.port(), o);
    named.send(tern_test::get_request("/who"));
    CHECK(named.read_response().body == "[CN=bob]");
    // Without a CA file the settings are refused when given.
    tern::tls_config incomplete;
    incomplete.certificates.push_back(in_memory(ca().issue({"localhost"})));
    incomplete.client_certificates = tern::client_certificates::required;
    tern::app app;
    CHECK_THROWS_WITH(app.tls(incomplete), Catch::Contains("client_ca_file"));
}

TEST_CASE("tls: the plain listener beside HTTPS redirects to the same host and target", "[tls]") {
    auto cfg = localhost_tls();
    cfg.tls->http_port = 0;  // any free port
    test_server server(
        [](tern::app& app) { app.post("/form", [](tern::context& ctx) { ctx.text("posted"); }); },
        cfg);
    const auto https = server.port();
    const auto http = server.app().http_port();
    REQUIRE(http != 0);
    REQUIRE(http != https);
    raw_client plain(http);
    plain.send("GET /a/b?x=1&y=%20 HTTP/1.1\r\nHost: example.test:8080\r\n\r\n");
    auto r = plain.read_response();
    CHECK(r.status == 301);
    CHECK(r.header("Location") ==
          "https://example.test:" + std::to_string(https) + "/a/b?x=1&y=%20");
    // Same connection (keep-alive), another method: 308 keeps the method.
    plain.send("POST /form HTTP/1.1\r\nHost: [::1]:80\r\nContent-Length: 3\r\n\r\na=1");
    r = plain.read_response();
    CHECK(r.status == 308);
    CHECK(r.header("Location") == "https://[::1]:" + std::to_string(https) + "/form");
    // No Host to redirect to: 400.
    raw_client old(http);
    old.send("GET / HTTP/1.0\r\n\r\n");
    CHECK(old.read_response().status == 400);
    // HTTPS itself serves the app.
    auto tls = tls_client(https);
    tls.send(tern_test::body_request("POST", "/form", "a=1"));
    CHECK(tls.read_response().body == "posted");
}

TEST_CASE("tls: the plain listener beside HTTPS may serve the app instead", "[tls]") {
    auto cfg = localhost_tls();
    cfg.tls->http_port = 0;
    cfg.tls->http = tern::plain_http::serve;
    test_server server(
        [](tern::app& app) {
            app.get("/scheme", [](tern::context& ctx) { ctx.text(std::string(ctx.scheme())); });
        },
        cfg);
    raw_client plain(server.app().http_port());
    plain.send(tern_test::get_request("/scheme"));
    CHECK(plain.read_response().body == "http");
    auto tls = tls_client(server.port());
    tls.send(tern_test::get_request("/scheme"));
    CHECK(tls.read_response().body == "https");
}

TEST_CASE(
    "tls: a connection over max_concurrent_connections is closed without a handshake and "
    "the server stops cleanly",
    "[tls][limits][connections]") {
    auto cfg = localhost_tls();
    cfg.limits.max_concurrent_connections = 1;
    cfg.timeouts.drain = std::chrono::seconds(5);
    auto server = std::make_unique<test_server>(
        [](tern::app& app) { app.get("/", [](tern::context& ctx) { ctx.text("ok"); }); }, cfg);
    auto held = tls_client(server->port());
    held.send(tern_test::get_request("/"));
    REQUIRE(held.read_response().status == 200);
    // A plain 503 means nothing to a TLS client: the refused ones are closed before any byte.
    for (int i = 0; i < 20; ++i) {
        raw_client over(server->port());
        CHECK_FALSE(over.start_tls(verified()));
        CHECK(over.closed_by_peer());
    }
    CHECK(server->app().stats().connections_refused >= 20);
    held.send(tern_test::get_request("/"));
    CHECK(held.read_response().status == 200);
    held.close();
    // The refused connections left nothing on the loop: the stop ends at once, well inside
    // the drain deadline, with no connection open.
    CHECK(tern_test::eventually([&] { return server->app().stats().open_connections == 0; }));
    server->app().stop();
    CHECK(server->app().stats().open_connections == 0);
    server.reset();
}

}  // namespace wire_test_tls

// The kit over HTTPS: test_tls()'s certificate (what it is, that curl trusts it), the
// HTTP/1.1 client with cookies and raw(), the SSE reader and the WebSocket client over TLS,
// and a server whose certificate is not the kit's, which every HTTPS client of the kit
// refuses by name.

#include "support/test_certs.hpp"

#include <catch2/catch.hpp>
#include <tern/tern.hpp>
#include <tern/testing.hpp>

#include <openssl/bio.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#if !defined(_WIN32)
#include <unistd.h>
#endif
#include <array>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <memory>
#include <string>

namespace kit_test_tls_kit {

using namespace std::chrono_literals;

namespace {

// Sets a cookie at /login and shows it at /me; /echo answers the body; /scheme tells how
// the request came.
void add_account(tern::app& app) {
    app.post("/login", [](tern::context& ctx) {
        ctx.cookie("session", "s-" + std::string(ctx.body())).status(204);
    });
    app.get("/me", [](tern::context& ctx) {
        ctx.text(std::string(ctx.cookie("session").value_or("nobody")));
    });
    app.post("/echo", [](tern::context& ctx) { ctx.text(std::string(ctx.body())); });
    app.get("/scheme", [](tern::context& ctx) {
        ctx.text(std::string(ctx.scheme()) + " " + std::string(ctx.protocol()));
    });
}

// The kit's certificate, parsed.
std::unique_ptr<X509, decltype(&X509_free)> kit_certificate() {
    const std::string& pem = tern::testing::test_certificate_pem();
    const std::unique_ptr<BIO, decltype(&BIO_free)> bio(
        BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())), &BIO_free);
    return {PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr), &X509_free};
}

#if !defined(_WIN32)
// Runs `command` and returns its standard output.
std::string run(const std::string& command) {
    std::string out;
    FILE* pipe = ::popen(command.c_str(), "r");
    REQUIRE(pipe != nullptr);
    std::array<char, 4096> chunk{};
    while (const std::size_t n = std::fread(chunk.data(), 1, chunk.size(), pipe)) {
        out.append(chunk.data(), n);
    }
    ::pclose(pipe);
    return out;
}
#endif

}  // namespace

TEST_CASE(
    "test_tls is one self-signed P-256 certificate for localhost and 127.0.0.1, valid 30 days",
    "[kit][tls]") {
    const tern::tls_config first = tern::testing::test_tls();
    REQUIRE(first.certificates.size() == 1);
    CHECK(first.certificates[0].cert_pem == tern::testing::test_certificate_pem());
    CHECK(first.certificates[0].key_pem.find("PRIVATE KEY") != std::string::npos);
    CHECK(first.certificates[0].cert_file.empty());
    CHECK(first.certificates[0].key_file.empty());
    // Made once: every call gives the same certificate and key.
    CHECK(tern::testing::test_tls().certificates[0].key_pem == first.certificates[0].key_pem);

    const auto cert = kit_certificate();
    REQUIRE(cert != nullptr);
    EVP_PKEY* key = X509_get0_pubkey(cert.get());
    REQUIRE(key != nullptr);
    CHECK(EVP_PKEY_get_base_id(key) == EVP_PKEY_EC);
    std::array<char, 64> group{};
    std::size_t group_length = 0;
    REQUIRE(EVP_PKEY_get_group_name(key, group.data(), group.size(), &group_length) == 1);
    CHECK(std::string(group.data(), group_length) == "prime256v1");
    CHECK(X509_check_host(cert.get(), "localhost", 0, 0, nullptr) == 1);
    CHECK(X509_check_ip_asc(cert.get(), "127.0.0.1", 0) == 1);
    CHECK(X509_check_host(cert.get(), "example.com", 0, 0, nullptr) == 0);
    // Self-signed, valid from an hour ago for 30 days.
    CHECK(X509_check_issued(cert.get(), cert.get()) == X509_V_OK);
    int days = 0;
    int seconds = 0;
    REQUIRE(ASN1_TIME_diff(&days, &seconds, X509_get0_notBefore(cert.get()), nullptr) == 1);
    CHECK(days == 0);
    CHECK(seconds >= 3600 - 60);
    CHECK(seconds <= 3600 + 60);
    REQUIRE(ASN1_TIME_diff(&days, &seconds, X509_get0_notBefore(cert.get()),
                           X509_get0_notAfter(cert.get())) == 1);
    CHECK(days == 30);
    CHECK(seconds == 0);
}

TEST_CASE("HTTPS: GET and POST over the kit's certificate, with the cookie jar", "[kit][tls]") {
    tern::app app;
    app.tls(tern::testing::test_tls());
    add_account(app);
    tern::testing::server server(app);
    auto http = server.make_client();  // TLS, because the app serves HTTPS

    const auto scheme = http.get("/scheme");
    CHECK(scheme.status == 200);
    CHECK(scheme.body == "https HTTP/1.1");
    CHECK(scheme.protocol == "HTTP/1.1");
    CHECK(http.get("/me").body == "nobody");
    CHECK(http.post("/login", "ada").status == 204);
    CHECK(http.cookie("session") == "s-ada");
    CHECK(http.get("/me").body == "s-ada");
    CHECK(http.get("/nowhere").status == 404);
    const std::string big(1024 * 1024, 'x');
    const auto echoed = http.post("/echo", big);  // 1 MiB each way
    CHECK(echoed.status == 200);
    CHECK(echoed.body == big);
    // Every call went over the one keep-alive connection (the session tickets TLS 1.3 sends
    // after the handshake do not count as bytes sent unasked).
    CHECK(server.app().stats().tls_handshakes == 1);

    // The same with the options given, and on a connection the client opens again.
    auto explicit_tls = tern::testing::client(server.port(), {.tls = true});
    CHECK(explicit_tls.get("/scheme").body == "https HTTP/1.1");
    explicit_tls.disconnect();
    CHECK(explicit_tls.get("/scheme").body == "https HTTP/1.1");
}

TEST_CASE("HTTPS: test() hands over a TLS client, and raw() goes over TLS", "[kit][tls]") {
    tern::app app;
    app.tls(tern::testing::test_tls());
    add_account(app);
    tern::testing::test(app, [](tern::testing::server&, tern::testing::client& http) {
        CHECK(http.get("/scheme").body == "https HTTP/1.1");
        const std::string answer = http.raw("GET /me HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n");
        CHECK(answer.starts_with("HTTP/1.1 400 "));
        const std::string fine = http.raw("GET /me HTTP/1.1\r\nHost: localhost\r\n\r\n", 200ms);
        CHECK(fine.starts_with("HTTP/1.1 200 "));
        CHECK(fine.ends_with("nobody"));
    });
}

TEST_CASE(
    "HTTPS: a plain client to the HTTPS port gets tern's 400, a TLS one to a plain port "
    "fails its handshake",
    "[kit][tls]") {
    tern::app https;
    https.tls(tern::testing::test_tls());
    add_account(https);
    tern::testing::server secure(https);
    tern::testing::client plain(secure.port());
    plain.timeout(2s);
    const auto refused = plain.get("/me");
    CHECK(refused.status == 400);
    CHECK(refused.body.find("nobody") == std::string::npos);

    tern::app http;
    add_account(http);
    tern::testing::server unsecured(http);
    tern::testing::client tls(unsecured.port(), {.tls = true});
    tls.timeout(2s);
    CHECK_THROWS_WITH(tls.get("/me"), Catch::Contains("TLS handshake failed"));
    CHECK(unsecured.make_client().get("/me").body == "nobody");  // and it serves on
}

TEST_CASE("HTTPS: a server whose certificate is not the kit's fails verification in every client",
          "[kit][tls]") {
    const tern_test::test_ca other_ca("another CA");
    const tern_test::pem_pair other = other_ca.issue({"localhost"});
    tern::app app;
    tern::tls_config settings;
    settings.certificates.push_back({.cert_pem = other.cert_pem, .key_pem = other.key_pem});
    app.tls(settings);
    add_account(app);
    app.sse("/events", [](tern::context&, tern::sse_client client) { client.send("x"); });
    app.ws("/echo", [](tern::ws_handlers&) {});
    tern::testing::server server(app);

    auto http = server.make_client();
    http.timeout(3s);
    CHECK_THROWS_WITH(http.get("/me"), Catch::Contains("certificate verification failed") &&
                                           Catch::Contains("GET /me"));
    // The server took the handshake and serves on: the next one fails the same way.
    CHECK_THROWS_WITH(http.get("/me"), Catch::Contains("certificate verification failed"));
    auto h2 = server.make_client({.http2 = true});
    CHECK_THROWS_WITH(h2.get("/me"), Catch::Contains("certificate verification failed"));
    CHECK_THROWS_WITH(server.sse("/events"), Catch::Contains("certificate verification failed"));
    CHECK_THROWS_WITH(server.ws("/echo"), Catch::Contains("certificate verification failed"));
}

// Not on Windows (docs/platforms.md): the test runs the build machine's curl, which a
// Windows test program under wine cannot start (tests/windows/run.sh runs curl against
// hello.exe instead).
#if !defined(_WIN32)
TEST_CASE("HTTPS: curl trusts the kit's certificate from test_certificate_pem", "[kit][tls]") {
    tern::app app;
    app.tls(tern::testing::test_tls());
    add_account(app);
    tern::testing::server server(app);
    std::string path = "/tmp/tern-kit-cert-XXXXXX";
    const int fd = ::mkstemp(path.data());
    REQUIRE(fd >= 0);
    const std::string& pem = tern::testing::test_certificate_pem();
    REQUIRE(::write(fd, pem.data(), pem.size()) == static_cast<ssize_t>(pem.size()));
    ::close(fd);
    const std::string port = std::to_string(server.port());
    const std::string out =
        run("curl -sS --max-time 10 --cacert " + path + " --resolve localhost:" + port +
            ":127.0.0.1 https://localhost:" + port + "/scheme 2>&1");
    const std::string by_ip =
        run("curl -sS --max-time 10 --cacert " + path + " https://127.0.0.1:" + port + "/me 2>&1");
    ::unlink(path.c_str());
    CHECK(out == "https HTTP/2");  // curl chose h2 by ALPN
    CHECK(by_ip == "nobody");
}

#endif

TEST_CASE("HTTPS: an event stream over TLS", "[kit][tls][sse]") {
    tern::app app;
    app.tls(tern::testing::test_tls());
    app.sse("/events", [](tern::context&, tern::sse_client client) {
        client.send("one", "tick", "1");
        client.send("two", "tick", "2");
    });
    tern::testing::server server(app);
    auto events = server.sse("/events");
    const auto first = events.next();
    CHECK(first.data == "one");
    CHECK(first.type == "tick");
    CHECK(events.next().id == "2");
    CHECK_THROWS_AS(events.next(), tern::testing::stream_ended);
    events.reconnect();
    CHECK(events.next().data == "one");

    tern::testing::sse_options plain;  // tls off, given to the reader itself: no event stream
    plain.timeout = 2s;
    CHECK_THROWS_AS(tern::testing::sse_reader(server.port(), "/events", plain),
                    tern::testing::client_error);
}

TEST_CASE("HTTPS: a WebSocket over TLS (wss) echoes and closes", "[kit][tls][ws]") {
    tern::app app;
    app.tls(tern::testing::test_tls());
    app.ws("/echo", [](tern::ws_handlers& ws) {
        ws.on_message([](tern::ws_connection& c, std::string_view text) { c.send(text); });
        ws.on_binary([](tern::ws_connection& c, std::string_view data) { c.send_binary(data); });
    });
    tern::testing::server server(app);
    auto ws = server.ws("/echo");
    ws.send_text("hello");
    CHECK(ws.receive().data == "hello");
    const std::string big(300000, 'b');
    ws.send_binary(big);
    const auto back = ws.receive();
    CHECK(back.binary);
    CHECK(back.data == big);
    CHECK(ws.close() == 1000);

    tern::testing::ws_options options;
    options.tls = true;
    auto direct = tern::testing::ws_client(server.port(), "/echo", options);
    direct.send_text("direct");
    CHECK(direct.receive().data == "direct");
    CHECK(direct.close() == 1000);
}

}  // namespace kit_test_tls_kit

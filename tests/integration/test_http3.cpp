// HTTP/3 at start (docs/http3.md): `app.http3(port)` refuses with a message that says why
// without tls(...), with a certificate given as PEM text (GnuTLS reads files), and in a
// build with -DTERN_HTTP3=OFF (every case here passes in both builds: each refusal names
// http3). Serving over HTTP/3 is tested with real clients (tests/clients/h3_clients.py,
// tests/examples/live_browser_h2.py --h3).

#include <catch2/catch.hpp>

#include <tern/app.hpp>

#include <string>

namespace wire_test_http3 {

TEST_CASE("http3: without tls it refuses at start and says why", "[http3]") {
    tern::app app;
    app.get("/", [](tern::context& ctx) { ctx.text("hi"); });
    app.http3(18443);
    CHECK_THROWS_WITH(app.start("127.0.0.1", 0), Catch::Contains("http3"));
    CHECK(app.port() == 0);
    // Off again, it starts.
    app.http3(0);
    app.start("127.0.0.1", 0);
    CHECK(app.port() != 0);
    app.stop();
}

TEST_CASE("http3: with a certificate as PEM text it refuses at start and says why", "[http3]") {
    tern::app app;
    tern::tls_config tls;
    tls.certificates.push_back(
        {.cert_pem = "-----BEGIN CERTIFICATE-----", .key_pem = "-----BEGIN PRIVATE KEY-----"});
    app.tls(tls);
    app.http3(18443);
    CHECK_THROWS_WITH(app.start("127.0.0.1", 0), Catch::Contains("http3"));
    CHECK(app.port() == 0);
}

}  // namespace wire_test_http3

// HTTP/3 at start (docs/http3.md): `app.http3(port)` refuses with a message that says why,
// in a build without -DTERN_HTTP3=ON, without tls(...), and, in this first slice, in every
// build (the handshake, the UDP listener and src/h3 are not built yet).

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

TEST_CASE("http3: with tls it refuses at start while it is not served", "[http3]") {
    tern::app app;
    app.tls("/nonexistent/cert.pem", "/nonexistent/key.pem");
    app.http3(18443);
    CHECK_THROWS_WITH(app.start("127.0.0.1", 0), Catch::Contains("http3"));
}

}  // namespace wire_test_http3

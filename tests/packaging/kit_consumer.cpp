// A test a user writes with tern's test kit (tern::testing), built by every packaging test
// beside consumer.cpp (tests/packaging/run.sh): a plain program, no test framework. It
// starts an app with tern::testing::test, checks a GET, a JSON POST and a cookie kept
// between calls, an event of an SSE route, a WebSocket echo and its closing handshake (the
// kit's WebSocket client links libcrypto: the package must name it), that the port refuses
// once the test is over, and HTTPS with test_tls() over HTTP/2 and HTTP/1.1 (libssl and
// nghttp2, named by the package too). Exits 0 when all hold.

#include <tern/json.hpp>
#include <tern/tern.hpp>
#include <tern/testing.hpp>

#include <cstdio>
#include <string>
#include <string_view>

namespace {

int failures = 0;

// Like assert, but kept in release builds and counted.
void expect(bool ok, const char* what) {
    if (!ok) {
        std::printf("FAILED: %s\n", what);
        ++failures;
    }
}

}  // namespace

int main() {
    tern::app app;
    app.threads(1);
    app.get("/hello", [](tern::context& ctx) { ctx.text("hello"); });
    app.post("/login", [](tern::context& ctx) {
        ctx.cookie("user", ctx.body_as<tern::json>().at("name").get<std::string>()).status(204);
    });
    app.get("/me", [](tern::context& ctx) {
        ctx.json({{"user", std::string(ctx.cookie("user").value_or("nobody"))}});
    });
    app.sse("/events",
            [](tern::context&, tern::sse_client client) { client.send("tick", {}, "1"); });
    app.ws("/echo", [](tern::ws_handlers& ws) {
        ws.on_message([](tern::ws_connection& c, std::string_view text) { c.send(text); });
    });

    std::uint16_t port = 0;
    tern::testing::test(app, [&](tern::testing::server& server, tern::testing::client& http) {
        port = server.port();
        const auto hello = http.get("/hello");
        expect(hello.status == 200 && hello.body == "hello", "GET /hello is 200 hello");
        expect(http.post_json("/login", {{"name", "ada"}}).status == 204, "POST /login is 204");
        expect(http.get("/me").json()["user"] == "ada", "the cookie is sent back");
        auto events = server.sse("/events");
        const auto tick = events.next();
        expect(tick.data == "tick" && tick.id == "1", "the SSE route sends its event");
        auto ws = server.ws("/echo");
        ws.send_text("echo me");
        expect(ws.receive().data == "echo me", "the WebSocket echoes");
        expect(ws.close() == 1000, "the closing handshake is answered with 1000");
    });
    bool refused = false;
    try {
        tern::testing::client(port).get("/hello");
    } catch (const tern::testing::client_error&) {
        refused = true;
    }
    expect(refused, "the port refuses after the test");

    // HTTPS with the kit's certificate and HTTP/2 by ALPN: the kit's libssl and nghttp2, which
    // the package must name too.
    tern::app secure;
    secure.threads(1);
    secure.tls(tern::testing::test_tls());
    secure.get("/hello", [](tern::context& ctx) { ctx.text(std::string(ctx.protocol())); });
    {
        tern::testing::server https(secure);
        auto h2 = https.make_client({.http2 = true});
        const auto answer = h2.get("/hello");
        expect(answer.body == "HTTP/2" && answer.protocol == "HTTP/2", "h2 over HTTPS answers");
        expect(https.make_client().get("/hello").body == "HTTP/1.1", "HTTPS/1.1 answers");
    }
    std::printf("tern::testing consumer: %s\n", failures == 0 ? "all checks passed" : "failures");
    return failures == 0 ? 0 : 1;
}

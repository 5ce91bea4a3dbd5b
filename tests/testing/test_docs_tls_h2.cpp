// The HTTPS and HTTP/2 shapes of docs/testing.md, compiled and run as they are shown there.

#include <catch2/catch.hpp>
#include <tern/tern.hpp>
#include <tern/testing.hpp>

#include <string>
#include <string_view>
#include <vector>

namespace kit_test_docs_tls_h2 {

TEST_CASE("the login works over HTTPS, and so do the event stream and the WebSocket", "[docs]") {
    tern::app app;
    app.tls(tern::testing::test_tls());  // the kit's certificate, made once per process
    app.post("/login", [](tern::context& ctx) { ctx.cookie("session", "s-ada").status(204); });
    app.get("/me", [](tern::context& ctx) {
        ctx.text(std::string(ctx.scheme()) + " " +
                 std::string(ctx.cookie("session").value_or("-")));
    });
    app.sse("/news", [](tern::context&, tern::sse_client client) { client.send("hello"); });
    app.ws("/echo", [](tern::ws_handlers& ws) {
        ws.on_message([](tern::ws_connection& c, std::string_view text) { c.send(text); });
    });
    tern::testing::server server(app);

    auto https = server.make_client();  // TLS: the app serves HTTPS
    CHECK(https.post("/login", "").status == 204);
    CHECK(https.get("/me").body == "https s-ada");
    CHECK(server.sse("/news").next().data == "hello");  // over TLS too
    auto ws = server.ws("/echo");                       // wss
    ws.send_text("hi");
    CHECK(ws.receive().data == "hi");
    CHECK(ws.close() == 1000);
}

TEST_CASE("the dashboard's widgets load at once over HTTP/2", "[docs]") {
    tern::app app;
    app.tls(tern::testing::test_tls());
    app.get("/widgets/{name}", [](tern::context& ctx) {
        ctx.text(std::string(ctx.path_param("name")) + " over " + std::string(ctx.protocol()));
    });
    tern::testing::server server(app);

    auto h2 = server.make_client({.http2 = true});  // h2 by ALPN (TLS: the app serves HTTPS)
    CHECK(h2.get("/widgets/clock").body == "clock over HTTP/2");

    std::vector<tern::testing::request> page;
    for (const char* name : {"clock", "weather", "news"}) {
        page.push_back({.target = std::string("/widgets/") + name});
    }
    const auto widgets = h2.send_all(page);  // three streams on one connection, at once
    CHECK(widgets.size() == 3);
    CHECK(widgets[1].body == "weather over HTTP/2");
    CHECK(widgets[1].protocol == "HTTP/2");
}

TEST_CASE("an upload that contradicts its content-length is reset", "[docs]") {
    tern::app app;
    app.post("/upload", [](tern::context& ctx) { ctx.status(201); });
    tern::testing::server server(app);
    auto h2c = server.make_client({.http2 = true});  // h2c: the app serves plain HTTP

    CHECK_THROWS_WITH(h2c.post("/upload", "abc", "text/plain", {{"Content-Length", "10"}}),
                      Catch::Contains("RST_STREAM PROTOCOL_ERROR (0x1)"));
    CHECK(h2c.post("/upload", "abc").status == 201);  // the connection serves on
}

}  // namespace kit_test_docs_tls_h2

// The Server-Sent Events and WebSocket shapes of docs/testing.md, compiled and run as they
// are shown there.

#include <catch2/catch.hpp>
#include <tern/tern.hpp>
#include <tern/testing.hpp>

#include <chrono>
#include <string>

namespace kit_test_docs_streams {

TEST_CASE("the price stream sends quotes and resumes after the last one", "[docs]") {
    tern::app app;
    app.sse("/prices", [](tern::context&, tern::sse_client client) {
        const std::string& last = client.last_event_id();  // empty on a first connect
        const int from = last.empty() ? 1 : std::stoi(last) + 1;
        client.retry(std::chrono::milliseconds(2000));
        for (int n = from; n < from + 2; ++n) {
            client.send("{\"price\": " + std::to_string(40 + n) + "}", "quote", std::to_string(n));
        }
    });  // the handler returns: the last copy of the client goes, and the stream ends
    tern::testing::server server(app);

    auto prices = server.sse("/prices");
    const auto first = prices.next();
    CHECK(first.type == "quote");
    CHECK(first.data == "{\"price\": 41}");
    CHECK(first.id == "1");
    CHECK(prices.next().id == "2");
    CHECK(prices.retry() == std::chrono::milliseconds(2000));
    CHECK_THROWS_AS(prices.next(), tern::testing::stream_ended);

    prices.reconnect();  // with Last-Event-ID: 2, as EventSource reconnects
    CHECK(prices.next().data == "{\"price\": 43}");
}

TEST_CASE("a stream that sends nothing fails the test in time", "[docs]") {
    tern::sse_clients listeners;
    tern::app app;
    app.sse("/news", [&listeners](tern::context&, tern::sse_client client) {
        listeners.add(client);  // kept: the stream stays open
    });
    tern::testing::server server(app);

    tern::testing::sse_options options;
    options.timeout = std::chrono::milliseconds(200);
    options.headers = {{"Cookie", "session=s-ada"}};
    auto news = server.sse("/news", options);
    CHECK_THROWS_AS(news.next(), tern::testing::timeout_error);
    CHECK_THROWS_WITH(server.sse("/nowhere"), Catch::Contains("404"));
}

TEST_CASE("the echo route answers text and binary, and closes politely", "[docs]") {
    tern::app app;
    app.ws("/echo", [](tern::ws_handlers& ws) {
        ws.on_message([](tern::ws_connection& c, std::string_view text) { c.send(text); });
        ws.on_binary([](tern::ws_connection& c, std::string_view data) { c.send_binary(data); });
    });
    tern::testing::server server(app);

    auto ws = server.ws("/echo");
    ws.send_text("hello");
    CHECK(ws.receive().data == "hello");
    ws.send_binary(std::string(100000, 'x'));  // a 64-bit length each way
    const auto back = ws.receive();
    CHECK(back.binary);
    CHECK(back.data.size() == 100000);
    CHECK(ws.close() == 1000);  // the closing handshake: the server answers 1000
}

TEST_CASE("a room needs a token, and a kicked member sees the close code", "[docs]") {
    tern::app app;
    app.before("/rooms/{room}", [](tern::context& ctx) {
        if (ctx.query_param("token") != "secret") throw tern::http_error(401, "token?");
    });
    app.ws("/rooms/{room}", [](tern::ws_handlers& ws) {
        ws.subprotocols({"chat.v1"});
        ws.on_message([](tern::ws_connection& c, std::string_view text) {
            if (text == "spam") c.close(4008, "kicked");
        });
    });
    tern::testing::server server(app);

    CHECK_THROWS_WITH(server.ws("/rooms/a"), Catch::Contains("401"));

    tern::testing::ws_options options;
    options.subprotocols = {"chat.v1"};
    auto member = server.ws("/rooms/a?token=secret", options);
    CHECK(member.subprotocol() == "chat.v1");
    member.send_text("spam");
    try {
        member.receive();
        FAIL("the server sent a message instead of closing");
    } catch (const tern::testing::ws_closed& closed) {
        CHECK(closed.code() == 4008);
        CHECK(closed.reason() == "kicked");
    }

    auto rude = server.ws("/rooms/a?token=secret");
    rude.send_raw(std::string("\x81\x02hi", 4));  // a text frame without a mask
    CHECK(rude.wait_close() == 1002);
}

}  // namespace kit_test_docs_streams

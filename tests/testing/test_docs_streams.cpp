// The Server-Sent Events shapes of docs/testing.md, compiled and run as they are shown
// there.

#include <catch2/catch.hpp>
#include <tern/tern.hpp>
#include <tern/testing.hpp>

#include <chrono>
#include <string>

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

// The test kit's server and timeouts: the app runs for the server's scope only, a silent
// server ends in timeout_error, and bodies delimited by the close are read whole.

#include "testing/canned_server.hpp"

#include <catch2/catch.hpp>
#include <tern/tern.hpp>
#include <tern/testing.hpp>

#include <chrono>
#include <mutex>
#include <string>

namespace kit_test_kit_lifecycle {

TEST_CASE("the server runs the app on a free port for its scope, and after it the port refuses",
          "[testing]") {
    tern::app app;
    app.threads(1);
    app.get("/", [](tern::context& ctx) { ctx.text("up"); });
    std::uint16_t port = 0;
    {
        tern::testing::server server(app);
        port = server.port();
        REQUIRE(port != 0);
        CHECK(app.port() == port);
        auto http = server.make_client();
        CHECK(http.get("/").body == "up");
    }
    CHECK(app.port() == 0);
    tern::testing::client late(port);
    CHECK_THROWS_AS(late.get("/"), tern::testing::client_error);
    CHECK_THROWS_WITH(late.get("/"), Catch::Contains("cannot connect to 127.0.0.1:"));
}

TEST_CASE("test() stops the app when the function throws and the exception reaches the caller",
          "[testing]") {
    tern::app app;
    app.threads(1);
    app.get("/", [](tern::context& ctx) { ctx.text("up"); });
    std::uint16_t port = 0;
    struct failed {};
    CHECK_THROWS_AS(
        tern::testing::test(app,
                            [&port](tern::testing::server& server, tern::testing::client& http) {
                                port = server.port();
                                CHECK(http.get("/").body == "up");
                                throw failed{};
                            }),
        failed);
    CHECK(app.port() == 0);
    CHECK_THROWS_AS(tern::testing::client(port).get("/"), tern::testing::client_error);
}

TEST_CASE("a response that never comes ends in timeout_error naming the request", "[testing]") {
    tern::app app;
    app.threads(1);
    std::mutex mutex;
    tern::deferred held;
    app.get("/never", [&](tern::context& ctx) {
        const std::lock_guard lock(mutex);
        held = ctx.defer();
    });
    app.get("/fine", [](tern::context& ctx) { ctx.text("fine"); });
    tern::testing::test(app, [&](tern::testing::server&, tern::testing::client& http) {
        http.timeout(std::chrono::milliseconds(300));
        CHECK_THROWS_AS(http.get("/never"), tern::testing::timeout_error);
        CHECK_THROWS_WITH(http.get("/never"),
                          Catch::Contains("GET /never") && Catch::Contains("timeout"));
        // The client dropped the stuck connection: the next call gets a new one.
        http.timeout(std::chrono::seconds(10));
        CHECK(http.get("/fine").body == "fine");
        const std::lock_guard lock(mutex);
        held.complete();
    });
}

TEST_CASE("a server that accepts and stays silent ends in timeout_error", "[testing]") {
    tern_testing_test::canned_server silent("", false);
    tern::testing::client http(silent.port());
    http.timeout(std::chrono::milliseconds(200));
    CHECK_THROWS_AS(http.get("/"), tern::testing::timeout_error);
}

TEST_CASE("a body delimited by the close is read to the close", "[testing]") {
    tern_testing_test::canned_server old("HTTP/1.1 200 OK\r\nX-A: 1\r\n\r\nuntil the end", true);
    tern::testing::client http(old.port());
    const auto r = http.get("/");
    CHECK(r.status == 200);
    CHECK(r.header("x-a") == "1");
    CHECK(r.body == "until the end");
}

TEST_CASE("a response cut off in its body is a client_error, not a short body", "[testing]") {
    tern_testing_test::canned_server cut("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort",
                                         true);
    tern::testing::client http(cut.port());
    CHECK_THROWS_WITH(http.get("/"), Catch::Contains("closed the connection in the middle"));
}

TEST_CASE("an answer that is not HTTP is a client_error", "[testing]") {
    tern_testing_test::canned_server junk("SSH-2.0-OpenSSH\r\n\r\n", true);
    tern::testing::client http(junk.port());
    CHECK_THROWS_WITH(http.get("/"), Catch::Contains("not an HTTP/1.x status line"));
}

TEST_CASE("a chunked body with a trailer: the chunks joined, the trailer among the headers",
          "[testing]") {
    tern_testing_test::canned_server chunked(
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
        "5;ext=1\r\nhello\r\n1\r\n \r\n5\r\nworld\r\n0\r\nX-Sum: 11\r\n\r\n",
        true);
    tern::testing::client http(chunked.port());
    const auto r = http.get("/");
    CHECK(r.body == "hello world");
    CHECK(r.header("X-Sum") == "11");
}

TEST_CASE("interim 100 and 103 responses are skipped for the final one", "[testing]") {
    tern_testing_test::canned_server interim(
        "HTTP/1.1 100 Continue\r\n\r\n"
        "HTTP/1.1 103 Early Hints\r\nLink: </a.css>\r\n\r\n"
        "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok",
        true);
    tern::testing::client http(interim.port());
    const auto r = http.post("/", "body");
    CHECK(r.status == 200);
    CHECK(r.body == "ok");
    CHECK_FALSE(r.header("Link").has_value());
}

}  // namespace kit_test_kit_lifecycle

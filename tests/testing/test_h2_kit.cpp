// The kit's HTTP/2 client, h2 by ALPN over TLS and h2c with prior knowledge, against real
// apps: requests and responses, cookies, large bodies both ways, send_all's concurrent
// streams (proven by handlers that answer only when all of them have arrived), the server's
// RST_STREAM and GOAWAY, an app without HTTP/2, and a connection the server closed.

#include "support/eventually.hpp"
#include "support/temp_dir.hpp"

#include <catch2/catch.hpp>
#include <tern/tern.hpp>
#include <tern/testing.hpp>

#include <chrono>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace kit_test_h2_kit {

using namespace std::chrono_literals;
using tern::testing::client_options;

namespace {

// Routes that show what the server saw.
void add_routes(tern::app& app) {
    app.get("/hello", [](tern::context& ctx) {
        ctx.header("X-Reply", "yes")
            .text(std::string(ctx.protocol()) + " " +
                  std::string(ctx.header("x-test").value_or("-")));
    });
    app.post("/echo", [](tern::context& ctx) { ctx.text(std::string(ctx.body())); });
    app.get("/big", [](tern::context& ctx) { ctx.text(std::string(1024 * 1024, 'z')); });
    app.post("/login", [](tern::context& ctx) {
        ctx.cookie("session", "s-" + std::string(ctx.body())).status(204);
    });
    app.get("/me", [](tern::context& ctx) {
        ctx.text(std::string(ctx.cookie("session").value_or("nobody")));
    });
}

// What every wire must do alike: `http` is a client of an app with add_routes.
void check_basics(tern::testing::client& http) {
    const auto hello = http.get("/hello", {{"X-Test", "42"}});
    CHECK(hello.status == 200);
    CHECK(hello.protocol == "HTTP/2");
    CHECK(hello.body == "HTTP/2 42");
    CHECK(hello.header("x-reply") == "yes");
    CHECK(hello.header("Content-Type") == "text/plain; charset=utf-8");
    CHECK(http.head("/hello").body.empty());
    CHECK(http.get("/nowhere").status == 404);
    CHECK(http.request("DELETE", "/hello").status == 405);

    const auto echoed = http.post("/echo", "a body");
    CHECK(echoed.status == 200);
    CHECK(echoed.body == "a body");

    std::string big(1024 * 1024, '\0');
    for (std::size_t i = 0; i < big.size(); ++i) big[i] = static_cast<char>('a' + i % 26);
    const auto up = http.post("/echo", big);  // 1 MiB up, and back
    CHECK(up.status == 200);
    CHECK(up.body == big);
    const auto down = http.get("/big");
    CHECK(down.body.size() == 1024 * 1024);
    CHECK(down.body.find_first_not_of('z') == std::string::npos);

    CHECK(http.get("/me").body == "nobody");
    CHECK(http.post("/login", "ada").status == 204);
    CHECK(http.cookie("session") == "s-ada");
    CHECK(http.get("/me").body == "s-ada");
    http.header("X-Test", "default");
    CHECK(http.get("/hello").body == "HTTP/2 default");
    CHECK(http.get("/hello", {{"x-test", "extra wins"}}).body == "HTTP/2 extra wins");
}

// /meet/{n}: each request waits until `expected` of them have arrived, then all are answered
// with their own n. Requests sent one after another would never get past the first.
struct rendezvous {
    explicit rendezvous(std::size_t n) : expected(n) {}

    void add_route(tern::app& app) {
        app.get("/meet/{n}", [this](tern::context& ctx) {
            auto reply = ctx.defer();
            const std::string n(ctx.path_param("n"));
            std::vector<std::pair<tern::deferred, std::string>> ready;
            {
                std::lock_guard lock(mutex);
                waiting.emplace_back(std::move(reply), n);
                if (waiting.size() == expected) ready.swap(waiting);
            }
            for (auto& [r, text] : ready) {
                r.complete([text = text](tern::context& c) { c.text(text); });
            }
        });
    }

    std::size_t expected;
    std::mutex mutex;
    std::vector<std::pair<tern::deferred, std::string>> waiting;
};

void check_send_all_is_concurrent(tern::testing::server& server, bool tls) {
    auto http = server.make_client({.tls = tls, .http2 = true});
    http.timeout(5s);
    std::vector<tern::testing::request> requests;
    for (int i = 0; i < 20; ++i) requests.push_back({"GET", "/meet/" + std::to_string(i), {}, {}});
    const auto responses = http.send_all(requests);
    REQUIRE(responses.size() == 20);
    for (int i = 0; i < 20; ++i) {
        CHECK(responses[static_cast<std::size_t>(i)].status == 200);
        CHECK(responses[static_cast<std::size_t>(i)].body == std::to_string(i));
        CHECK(responses[static_cast<std::size_t>(i)].protocol == "HTTP/2");
    }
    CHECK(server.app().stats().h2_connections == 1);  // all on the one connection
}

}  // namespace

TEST_CASE("HTTP/2 by ALPN over TLS: requests, headers, large bodies, cookies", "[kit][h2]") {
    tern::app app;
    app.tls(tern::testing::test_tls());
    add_routes(app);
    tern::testing::server server(app);
    auto http = server.make_client({.http2 = true});  // TLS set for the HTTPS app
    check_basics(http);
    CHECK(server.app().stats().h2_connections == 1);  // every call on the one connection
    CHECK(server.app().stats().tls_handshakes == 1);
}

TEST_CASE("HTTP/2 as h2c with prior knowledge: requests, headers, large bodies, cookies",
          "[kit][h2]") {
    tern::app app;
    add_routes(app);
    tern::testing::server server(app);
    auto http = server.make_client({.http2 = true});
    check_basics(http);
    CHECK(server.app().stats().h2_connections == 1);
}

TEST_CASE("send_all sends 20 requests as concurrent streams, h2 and h2c", "[kit][h2]") {
    rendezvous meeting(20);
    tern::app app;
    app.tls(tern::testing::test_tls());
    meeting.add_route(app);
    tern::testing::server server(app);
    check_send_all_is_concurrent(server, true);

    rendezvous plain_meeting(20);
    tern::app plain;
    plain_meeting.add_route(plain);
    tern::testing::server plain_server(plain);
    check_send_all_is_concurrent(plain_server, false);
}

TEST_CASE("send_all over HTTP/1.1 sends one request after another, in order", "[kit][h2]") {
    rendezvous pair(2);  // two at once would meet; one after another never does
    tern::app app;
    add_routes(app);
    pair.add_route(app);
    tern::testing::server server(app);
    auto http = server.make_client();
    const auto responses = http.send_all({{"POST", "/login", "bob", {}},
                                          {"GET", "/me", {}, {}},
                                          {"POST", "/echo", "third", {{"X-Any", "1"}}}});
    REQUIRE(responses.size() == 3);
    CHECK(responses[0].status == 204);
    CHECK(responses[1].body == "s-bob");  // the cookie of the first, sent with the second
    CHECK(responses[2].body == "third");
    CHECK(responses[2].protocol == "HTTP/1.1");
    CHECK(http.send_all({}).empty());

    http.timeout(500ms);
    CHECK_THROWS_AS(http.send_all({{"GET", "/meet/0", {}, {}}, {"GET", "/meet/1", {}, {}}}),
                    tern::testing::timeout_error);
}

TEST_CASE(
    "HTTP/2: a stream the server resets is a client_error naming the code, and the "
    "connection serves on",
    "[kit][h2]") {
    tern::app app;
    add_routes(app);
    tern::testing::server server(app);
    auto http = server.make_client({.http2 = true});
    CHECK(http.get("/me").status == 200);
    // A body shorter than its content-length: nghttp2 in the server resets the stream.
    CHECK_THROWS_WITH(http.post("/echo", "abc", "text/plain", {{"Content-Length", "10"}}),
                      Catch::Contains("POST /echo") && Catch::Contains("RST_STREAM") &&
                          Catch::Contains("PROTOCOL_ERROR (0x1)"));
    CHECK(http.get("/me").body == "nobody");

    // In send_all, the failed request is named; the others were answered.
    CHECK_THROWS_WITH(
        http.send_all(
            {{"GET", "/me", {}, {}}, {"POST", "/echo", "abc", {{"content-length", "9"}}}}),
        Catch::Contains("POST /echo (request 2)") && Catch::Contains("PROTOCOL_ERROR"));
    CHECK(http.get("/hello").body == "HTTP/2 -");
}

TEST_CASE("HTTP/2: a body over the limit gets its 413 though the server resets the upload",
          "[kit][h2]") {
    tern::app app;
    app.max_body_size(1000);
    add_routes(app);
    tern::testing::server server(app);
    auto http = server.make_client({.http2 = true});
    const auto refused = http.post("/echo", std::string(200000, 'x'));
    CHECK(refused.status == 413);
    CHECK(http.post("/echo", "small").body == "small");
}

TEST_CASE("HTTP/2: an app without HTTP/2 is a clear client_error, h2 and h2c", "[kit][h2]") {
    tern::app app;
    app.tls(tern::testing::test_tls()).http2(false);
    add_routes(app);
    tern::testing::server server(app);
    auto h2 = server.make_client({.http2 = true});
    h2.timeout(3s);
    CHECK_THROWS_WITH(h2.get("/me"), Catch::Contains("GET /me") && Catch::Contains("ALPN") &&
                                         Catch::Contains("h2") && Catch::Contains("app.http2"));
    CHECK(server.make_client().get("/me").body == "nobody");  // HTTP/1.1 serves on

    tern::app plain;
    plain.http2(false);
    add_routes(plain);
    tern::testing::server plain_server(plain);
    auto h2c = plain_server.make_client({.http2 = true});
    h2c.timeout(3s);
    CHECK_THROWS_WITH(h2c.get("/me"), Catch::Contains("not HTTP/2") && Catch::Contains("505") &&
                                          Catch::Contains("app.http2"));
    CHECK(plain_server.make_client().get("/me").body == "nobody");
}

TEST_CASE("HTTP/2: a connection the server closed is opened again on the next call", "[kit][h2]") {
    tern::config settings;
    settings.timeouts.keep_alive = 100ms;  // an idle HTTP/2 connection: GOAWAY, close
    tern::app app(settings);
    add_routes(app);
    tern::testing::server server(app);
    auto http = server.make_client({.http2 = true});
    CHECK(http.post("/login", "eve").status == 204);
    std::this_thread::sleep_for(400ms);
    CHECK(http.get("/me").body == "s-eve");
    std::this_thread::sleep_for(400ms);
    const auto both = http.send_all({{"GET", "/me", {}, {}}, {"GET", "/hello", {}, {}}});
    CHECK(both[0].body == "s-eve");
    CHECK(both[1].body == "HTTP/2 -");
    CHECK(server.app().stats().h2_connections >= 3);
}

TEST_CASE("HTTP/2: a late answer is a timeout_error, raw() is refused, and the client serves on",
          "[kit][h2]") {
    std::vector<tern::deferred> held;
    std::mutex mutex;
    tern::app app;
    add_routes(app);
    app.get("/never", [&](tern::context& ctx) {
        std::lock_guard lock(mutex);
        held.push_back(ctx.defer());
    });
    tern::testing::server server(app);
    auto http = server.make_client({.http2 = true});
    http.timeout(300ms);
    CHECK_THROWS_WITH(http.get("/never"), Catch::Contains("GET /never") &&
                                              Catch::Contains("within the timeout (300 ms)"));
    CHECK(http.get("/me").body == "nobody");
    CHECK_THROWS_AS(http.raw("GET / HTTP/1.1\r\n\r\n"), std::logic_error);
}

TEST_CASE("HTTP/2: a server that stops before answering is a client_error naming its GOAWAY",
          "[kit][h2]") {
    std::vector<tern::deferred> held;
    std::mutex mutex;
    tern::config settings;
    settings.timeouts.drain = 300ms;  // the held request is cut off then
    tern::app app(settings);
    app.get("/never", [&](tern::context& ctx) {
        std::lock_guard lock(mutex);
        held.push_back(ctx.defer());
    });
    tern::testing::server server(app);
    auto http = server.make_client({.http2 = true});
    http.timeout(10s);
    std::thread stopper([&] {
        tern_test::eventually([&] {
            std::lock_guard lock(mutex);
            return !held.empty();
        });
        server.stop();
    });
    CHECK_THROWS_WITH(http.get("/never"), Catch::Contains("GET /never") &&
                                              Catch::Contains("GOAWAY NO_ERROR (0x0)") &&
                                              Catch::Contains("before the response was complete"));
    stopper.join();
    CHECK_THROWS_AS(http.get("/never"), tern::testing::client_error);  // the port refuses now
}

TEST_CASE(
    "HTTP/2: each stream's request and response start empty though the connection reuses "
    "the buffers of the streams before it",
    "[kit][h2]") {
    // A static file's answer carries fields and a body in memory; the route after it on the
    // same connection must see none of that request's fields and send none of its answer's.
    tern_test::temp_dir dir;
    dir.write("page.html", std::string(1400, 'p'));
    tern::app app;
    app.static_files(dir.path.string());
    app.get("/seen", [](tern::context& ctx) {
        std::string names;
        for (const auto& f : ctx.headers()) names += std::string(f.name) + ",";
        ctx.header("X-Own", "1").text(names);
    });
    tern::testing::server server(app);
    auto http = server.make_client({.http2 = true});
    for (int round = 0; round < 3; ++round) {
        // Ten at once, then one by one: streams end together and start together, so that
        // the buffers of several are kept and taken.
        std::vector<tern::testing::request> pages;
        for (int i = 0; i < 10; ++i) {
            pages.push_back({"GET", "/page.html", {}, {{"X-Page-Only", std::to_string(i)}}});
        }
        for (const auto& page : http.send_all(pages)) {
            CHECK(page.status == 200);
            CHECK(page.body == std::string(1400, 'p'));
            CHECK(page.header("etag").has_value());
        }
        std::vector<tern::testing::request> seen(10, {"GET", "/seen", {}, {}});
        for (const auto& r : http.send_all(seen)) {
            CHECK(r.status == 200);
            CHECK(r.body.find("x-page-only") == std::string::npos);
            CHECK(r.body.find("Host,") != std::string::npos);
            CHECK(r.header("x-own") == "1");
            CHECK_FALSE(r.header("etag").has_value());
            CHECK_FALSE(r.header("last-modified").has_value());
            CHECK(r.header("content-type") == "text/plain; charset=utf-8");
        }
        const auto one = http.get("/seen", {{"X-Late", "1"}});
        CHECK(one.body.find("x-late") != std::string::npos);
        CHECK(one.body.find("x-page-only") == std::string::npos);
    }
    CHECK(server.app().stats().h2_connections == 1);
}

}  // namespace kit_test_h2_kit

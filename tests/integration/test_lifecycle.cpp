// The server's lifecycle and setup rules: start/stop/listen, settings fixed once running,
// registration mistakes refused loudly.

#include "platform/socket_api.hpp"

#include <atomic>
#include <catch2/catch.hpp>
#include <cerrno>
#include <chrono>
#include <exception>
#include <filesystem>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <system_error>
#include <thread>

#include "support/raw_client.hpp"
#include "support/test_server.hpp"

namespace wire_test_lifecycle {

using namespace tern_test;

namespace {

const tern::handler ok_handler = [](tern::context& ctx) { ctx.text("ok"); };

// A port that was free a moment ago: bind to port 0, read the port, close (nothing
// connects, so not raw_client).
std::uint16_t free_port() {
    namespace platform = tern::detail::platform;
    platform::start_sockets();
    const platform::native_socket fd = ::socket(AF_INET, SOCK_STREAM, 0);
    REQUIRE(fd != platform::invalid_socket);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    REQUIRE(::bind(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0);
    platform::socket_length len = sizeof addr;
    REQUIRE(::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0);
    platform::close_socket(fd);
    return ntohs(addr.sin_port);
}

}  // namespace

TEST_CASE("port() is 0 before start and the bound port after start(host, 0)", "[wire][lifecycle]") {
    tern::app app;
    app.threads(1).get("/", ok_handler);
    CHECK(app.port() == 0);
    app.start("127.0.0.1", 0);
    CHECK(app.port() != 0);
    raw_client c(app.port());
    c.send(get_request("/"));
    CHECK(c.read_response().body == "ok");
    app.stop();
}

TEST_CASE("a server with threads(2) serves 20 concurrent clients", "[wire][lifecycle]") {
    test_server server([](tern::app& app) {
        app.threads(2);
        app.get("/c/{i}", [](tern::context& ctx) { ctx.text(std::string(ctx.path_param("i"))); });
    });
    std::vector<raw_client> clients = open_clients(server.port(), 20);
    // All twenty are connected before any request is sent, then all are answered.
    for (std::size_t i = 0; i < clients.size(); ++i) {
        clients[i].send(get_request("/c/" + std::to_string(i)));
    }
    for (std::size_t i = 0; i < clients.size(); ++i) {
        const response r = clients[i].read_response();
        INFO("client " << i << ": " << describe(r));
        CHECK(r.status == 200);
        CHECK(r.body == std::to_string(i));
    }
}

TEST_CASE("a server with threads(3) serves its connections on all three of its loops",
          "[wire][lifecycle]") {
    // Linux: each loop has its own socket on the port and the kernel spreads connections over
    // them (30 connections all on fewer than 3 loops is a chance of about 2 in 10^5).
    // The portable path (docs/platforms.md): one acceptor hands them to the loops in turn.
    std::mutex mutex;
    std::set<std::thread::id> loops;
    test_server server([&](tern::app& app) {
        app.threads(3);
        app.get("/where", [&](tern::context& ctx) {
            const std::lock_guard lock(mutex);
            loops.insert(std::this_thread::get_id());
            ctx.text("here");
        });
    });
    std::vector<raw_client> clients = open_clients(server.port(), 30);
    for (auto& c : clients) c.send(get_request("/where"));
    for (auto& c : clients) CHECK(c.read_response().body == "here");
    const std::lock_guard lock(mutex);
    CHECK(loops.size() == 3);
}

TEST_CASE("after stop() new connections are refused", "[wire][lifecycle]") {
    test_server server;
    const std::uint16_t port = server.port();
    check_still_serving(port);
    server.stop();
    CHECK(raw_client::connect_error(port) == ECONNREFUSED);
}

TEST_CASE("stop() closes idle keep-alive connections", "[wire][lifecycle]") {
    test_server server;
    raw_client c = server.client();
    c.send(get_request(alive_path));
    CHECK(c.read_response().body == "alive");
    server.stop();
    CHECK(c.closed_by_peer());
}

TEST_CASE("stop() may be called more than once", "[wire][lifecycle]") {
    test_server server;
    CHECK_NOTHROW(server.stop());
    CHECK_NOTHROW(server.stop());
}  // and once more by the destructor

TEST_CASE("destroying a running app stops it", "[wire][lifecycle]") {
    std::uint16_t port = 0;
    {
        tern::app app;
        app.threads(1).get("/", ok_handler);
        app.start("127.0.0.1", 0);
        port = app.port();
        REQUIRE(raw_client::connect_error(port) == 0);
    }
    CHECK(raw_client::connect_error(port) == ECONNREFUSED);
}

TEST_CASE("listen(port) blocks until stop() is called from another thread", "[wire][lifecycle]") {
    tern::app app;
    app.threads(1).get("/", [](tern::context& ctx) { ctx.text("listening"); });

    // The port may be taken between free_port() and listen(): then listen throws
    // std::system_error and we try another port.
    bool served = false;
    for (int attempt = 0; attempt < 5 && !served; ++attempt) {
        const std::uint16_t port = free_port();
        std::atomic<bool> returned{false};
        std::exception_ptr failure;
        std::thread listener([&] {
            try {
                app.listen(port);
            } catch (...) {
                failure = std::current_exception();
            }
            returned = true;
        });
        // Wait (without asserting on how long) until the server answers or listen failed.
        const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
        while (!returned && !served && std::chrono::steady_clock::now() < give_up) {
            // No exception may leave this loop while the listener thread is joinable.
            try {
                raw_client c(port);
                c.send(get_request("/"));
                served = c.read_response().body == "listening";
            } catch (const client_error&) {
                std::this_thread::sleep_for(std::chrono::milliseconds(10));
            }
        }
        const bool still_blocked = !returned.load();
        if (served) CHECK(still_blocked);
        app.stop();  // ends listen(); harmless when listen() already failed
        listener.join();
        CHECK(returned.load());
        if (!served && failure) {
            try {
                std::rethrow_exception(failure);
            } catch (const std::system_error&) {
                continue;  // port taken meanwhile: retry
            }
        }
        REQUIRE(served);
    }
    CHECK(served);
}

TEST_CASE("changing a setting or adding a route after start throws std::logic_error",
          "[wire][lifecycle]") {
    test_server server;
    tern::app& app = server.app();
    CHECK_THROWS_AS(app.threads(4), std::logic_error);
    CHECK_THROWS_AS(app.max_body_size(1), std::logic_error);
    CHECK_THROWS_AS(app.limits({.max_header_count = 5}), std::logic_error);
    CHECK_THROWS_AS(app.configure([](tern::config& c) { c.blocking.threads = 4; }),
                    std::logic_error);
    CHECK_THROWS_AS(app.max_concurrent_connections(5), std::logic_error);
    CHECK_THROWS_AS(app.static_files(std::filesystem::temp_directory_path().string()),
                    std::logic_error);
    CHECK_THROWS_AS(app.get("/late", ok_handler), std::logic_error);
    CHECK_THROWS_AS(app.add("PROPFIND", "/late", ok_handler), std::logic_error);
    CHECK_THROWS_AS(app.start("127.0.0.1", 0), std::logic_error);
    // The running server is unaffected.
    CHECK(app.settings().threads == 2);
    check_still_serving(server.port());
}

TEST_CASE("a malformed method or pattern throws std::invalid_argument", "[wire][lifecycle]") {
    tern::app app;
    CHECK_THROWS_AS(app.add("GET", "bad", ok_handler), std::invalid_argument);
    CHECK_THROWS_AS(app.get("no-leading-slash", ok_handler), std::invalid_argument);
    CHECK_THROWS_AS(app.get("/a/{unclosed", ok_handler), std::invalid_argument);
    CHECK_THROWS_AS(app.get("/<rest>/more", ok_handler), std::invalid_argument);
    CHECK_THROWS_AS(app.add("", "/x", ok_handler), std::invalid_argument);
    CHECK_THROWS_AS(app.add("GE T", "/x", ok_handler), std::invalid_argument);
}

TEST_CASE("registering the same route twice throws std::invalid_argument", "[wire][lifecycle]") {
    tern::app app;
    app.get("/a", ok_handler);
    CHECK_THROWS_AS(app.get("/a", ok_handler), std::invalid_argument);
    app.get("/users/{id}", ok_handler);
    CHECK_THROWS_AS(app.get("/users/{id}", ok_handler), std::invalid_argument);
    // Another method on the same pattern is a different route.
    CHECK_NOTHROW(app.post("/a", ok_handler));
}

TEST_CASE("setters refuse values that cannot work with std::invalid_argument",
          "[wire][lifecycle]") {
    tern::app app;
    CHECK_THROWS_AS(app.limits({.max_header_count = 0}), std::invalid_argument);
    CHECK_THROWS_AS(app.max_concurrent_connections(0), std::invalid_argument);
    CHECK_THROWS_AS(app.limits({.max_header_size = 0}), std::invalid_argument);
    CHECK_THROWS_AS(app.limits({.max_line_size = 15}), std::invalid_argument);
    CHECK_NOTHROW(app.limits({.max_line_size = 16}));
    CHECK_THROWS_AS(app.configure([](tern::config& c) { c.blocking.threads = 0; }),
                    std::invalid_argument);
    CHECK_THROWS_AS(app.configure([](tern::config& c) {
        c.websocket.compression = true;  // fine, but the change as a whole is refused
        c.streams.buffer_size = 0;
    }),
                    std::invalid_argument);
    CHECK_FALSE(app.settings().websocket.compression);
    // A refused value leaves the setting as it was.
    CHECK(app.settings().limits.max_header_count == tern::config{}.limits.max_header_count);
    CHECK(app.settings().limits.max_line_size == 16);
    CHECK(app.settings().blocking.threads == tern::config{}.blocking.threads);
}

TEST_CASE("setters are reflected in settings()", "[wire][lifecycle]") {
    const std::string dir = std::filesystem::temp_directory_path().string();
    tern::app app;
    app.threads(3)
        .max_concurrent_connections(500)
        .max_body_size(1024 * 1024)
        .limits({.max_concurrent_connections = 500,
                 .max_line_size = 2048,
                 .max_header_count = 50,
                 .max_header_size = 4096,
                 .max_empty_lines = 3,
                 .max_body_size = 1024 * 1024})
        .configure([&](tern::config& c) {
            c.blocking.threads = 5;
            c.spool.directory = dir;
            c.streams.buffer_size = 1024;
            c.websocket.compression = true;
            c.http2.max_concurrent_streams = 9;
        })
        .configure([](tern::config& c) { c.blocking.max_queue = 7; })
        .static_files(dir);
    const tern::config& s = app.settings();
    CHECK(s.threads == 3);
    CHECK(s.limits.max_concurrent_connections == 500);
    CHECK(s.limits.max_body_size == 1024 * 1024);
    CHECK(s.limits.max_header_count == 50);
    CHECK(s.limits.max_header_size == 4096);
    CHECK(s.limits.max_line_size == 2048);
    CHECK(s.limits.max_empty_lines == 3);
    CHECK(s.blocking.max_queue == 7);
    CHECK(s.blocking.threads == 5);  // the second configure kept what the first one set
    CHECK(s.spool.directory == dir);
    CHECK(s.streams.buffer_size == 1024);
    CHECK(s.websocket.compression);
    CHECK(s.http2.max_concurrent_streams == 9);
    REQUIRE(s.static_files.size() == 1);
    CHECK(s.static_files[0].directory == dir);
    CHECK(s.static_files[0].hosted_path == "/");
}

TEST_CASE("app.limits and app.timeouts set a whole group, and the wire obeys it",
          "[wire][lifecycle]") {
    using namespace std::chrono_literals;
    tern::app app;
    app.limits({.max_body_size = 5, .max_json_depth = 7});
    app.timeouts({.header = 3s, .keep_alive = 4s});
    // The fields not named keep their defaults.
    const tern::config& s = app.settings();
    CHECK(s.limits.max_body_size == 5);
    CHECK(s.limits.max_json_depth == 7);
    CHECK(s.limits.max_header_count == tern::limits_config{}.max_header_count);
    CHECK(s.timeouts.header == 3s);
    CHECK(s.timeouts.keep_alive == 4s);
    CHECK(s.timeouts.write == tern::timeouts_config{}.write);
    // A refused group changes nothing.
    CHECK_THROWS_AS(app.limits({.max_header_count = 0}), std::invalid_argument);
    CHECK_THROWS_AS(app.timeouts({.drain = -1ms}), std::invalid_argument);
    CHECK(app.settings().limits.max_body_size == 5);
    CHECK(app.settings().timeouts.drain == tern::timeouts_config{}.drain);

    test_server srv([](tern::app& a) {
        a.limits({.max_body_size = 5});
        a.post("/echo", [](tern::context& ctx) { ctx.text(std::string(ctx.body())); });
    });
    CHECK(fetch(srv, "POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 5\r\n\r\nhello").body ==
          "hello");
    CHECK(fetch(srv, "POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 6\r\n\r\nhello!").status ==
          413);
    // A running server keeps its settings.
    CHECK_THROWS_AS(srv.app().limits({}), std::logic_error);
}

TEST_CASE("a default app has the default settings, app(config) keeps the given ones",
          "[wire][lifecycle]") {
    const tern::config defaults;
    tern::app plain;
    CHECK(plain.settings().threads == defaults.threads);
    CHECK(plain.settings().limits.max_concurrent_connections ==
          defaults.limits.max_concurrent_connections);
    CHECK(plain.settings().limits.max_body_size == defaults.limits.max_body_size);
    CHECK(plain.settings().limits.max_header_count == defaults.limits.max_header_count);
    CHECK(plain.settings().limits.max_header_size == defaults.limits.max_header_size);
    CHECK(plain.settings().limits.max_line_size == defaults.limits.max_line_size);
    CHECK(plain.settings().limits.max_empty_lines == defaults.limits.max_empty_lines);
    CHECK(plain.settings().static_files.empty());

    tern::config custom;
    custom.threads = 1;
    custom.limits.max_body_size = 123;
    custom.timeouts.keep_alive = std::chrono::milliseconds(4321);
    tern::app configured(custom);
    CHECK(configured.settings().threads == 1);
    CHECK(configured.settings().limits.max_body_size == 123);
    CHECK(configured.settings().timeouts.keep_alive == std::chrono::milliseconds(4321));
}

TEST_CASE("app(config) refuses what the setters refuse, naming every bad field",
          "[wire][lifecycle]") {
    tern::config bad;
    bad.limits.max_line_size = 0;
    bad.limits.max_header_count = 0;
    bad.compression = tern::compression_config{.level = 42};
    bad.timeouts.header = std::chrono::milliseconds(-1);
    bad.http3.stream_window = 100;
    bad.http3.connection_window = 50;
    bad.http3.max_open_files = 0;
    tern::static_files_config files;
    files.hosted_path = "assets";
    files.directory = "public";
    bad.static_files.push_back(files);
    std::string message;
    try {
        tern::app app(bad);
    } catch (const std::invalid_argument& e) {
        message = e.what();
    }
    INFO(message);
    CHECK(message.find("limits.max_line_size must be at least 16") != std::string::npos);
    CHECK(message.find("limits.max_header_count must be at least 1") != std::string::npos);
    CHECK(message.find("compression level must be 1..9") != std::string::npos);
    CHECK(message.find("timeouts.header must not be negative") != std::string::npos);
    CHECK(message.find("http3.stream_window must be at least 1024") != std::string::npos);
    CHECK(message.find("http3.connection_window must be at least 100") != std::string::npos);
    CHECK(message.find("http3.max_open_files must be at least 1") != std::string::npos);
    CHECK(message.find("hosted_path must begin with '/'") != std::string::npos);

    // One bad field, one message; and the setter says the same thing.
    tern::config one;
    one.limits.max_json_depth = 0;
    std::string from_config, from_setter;
    try {
        tern::app app(one);
    } catch (const std::invalid_argument& e) {
        from_config = e.what();
    }
    tern::app fine;
    try {
        fine.limits({.max_json_depth = 0});
    } catch (const std::invalid_argument& e) {
        from_setter = e.what();
    }
    CHECK(from_config == "tern: limits.max_json_depth must be at least 1");
    CHECK(from_setter == from_config);
    CHECK_NOTHROW(tern::app(tern::config{}));
}

TEST_CASE("a cors setting that the cors() setter refuses is refused in a config too",
          "[wire][lifecycle]") {
    tern::config bad;
    tern::cors_config cors;
    cors.allowed_origins = {"*"};
    cors.allow_credentials = true;
    bad.cors = cors;
    CHECK_THROWS_AS(tern::app(bad), std::invalid_argument);
    tern::app app;
    CHECK_THROWS_AS(app.cors(*bad.cors), std::invalid_argument);
}

// The one-field setters of 0.1 that 0.2 deprecates (docs/versioning.md) still set their
// field and refuse what the grouped setters refuse, until 0.3 removes them.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
TEST_CASE("the deprecated one-field setters still set their field until 0.3", "[wire][lifecycle]") {
    using namespace std::chrono_literals;
    const std::string dir = std::filesystem::temp_directory_path().string();
    tern::app app;
    app.blocking_threads(3).max_blocking_queue(4).max_blocking_wait(5ms);
    app.spool_body_above(6).spool_directory(dir).max_spooled_bytes(7);
    app.max_header_count(8).max_header_size(9).max_line_size(17).max_empty_lines(10);
    app.max_requests_per_connection(11).max_upload_file_size(12).max_json_size(13);
    app.max_json_depth(14).stream_buffer_size(15).max_stream_buffer(16).sse_keep_alive(17ms);
    app.ws_max_message_size(18).ws_ping_interval(19ms).ws_compression(true);
    app.h2_max_concurrent_streams(20).h2_max_unsent(21).h2_max_open_files(22);
    app.h2_max_spooled_bytes(23);
    const tern::config& s = app.settings();
    CHECK(s.blocking.threads == 3);
    CHECK(s.blocking.max_queue == 4);
    CHECK(s.blocking.max_wait == 5ms);
    CHECK(s.spool.body_above == 6);
    CHECK(s.spool.directory == dir);
    CHECK(s.spool.max_bytes == 7);
    CHECK(s.limits.max_header_count == 8);
    CHECK(s.limits.max_header_size == 9);
    CHECK(s.limits.max_line_size == 17);
    CHECK(s.limits.max_empty_lines == 10);
    CHECK(s.limits.max_requests_per_connection == 11);
    CHECK(s.limits.max_upload_file_size == 12);
    CHECK(s.limits.max_json_size == 13);
    CHECK(s.limits.max_json_depth == 14);
    CHECK(s.streams.buffer_size == 15);
    CHECK(s.streams.max_buffer == 16);
    CHECK(s.streams.sse_keep_alive == 17ms);
    CHECK(s.websocket.max_message_size == 18);
    CHECK(s.websocket.ping_interval == 19ms);
    CHECK(s.websocket.compression);
    CHECK(s.http2.max_concurrent_streams == 20);
    CHECK(s.http2.max_unsent == 21);
    CHECK(s.http2.max_open_files == 22);
    CHECK(s.http2.max_spooled_bytes == 23);
    CHECK_THROWS_AS(app.max_header_count(0), std::invalid_argument);
    CHECK_THROWS_AS(app.blocking_threads(0), std::invalid_argument);
    CHECK(s.limits.max_header_count == 8);  // a refused value changes nothing
}
#pragma GCC diagnostic pop

}  // namespace wire_test_lifecycle

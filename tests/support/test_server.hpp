#pragma once
/// @file test_server.hpp
/// A running tern::app for one wire test: routes registered by a lambda, started on
/// 127.0.0.1 with a free port, stopped when the fixture goes out of scope. Every server
/// also answers `GET /__alive` with "alive", which the checks below use to prove the
/// server still serves fresh clients after a bad one.

#include <catch2/catch.hpp>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <tern/tern.hpp>
#include <utility>

#include "support/raw_client.hpp"

namespace tern_test {

/// The path of the route every test_server registers.
inline constexpr std::string_view alive_path = "/__alive";

/// Settings for test servers: two threads (enough to exercise several event loops, cheap
/// to start hundreds of times), everything else at its default.
inline tern::config test_config() {
    tern::config cfg;
    cfg.threads = 2;
    return cfg;
}

/// RAII fixture: constructs a tern::app, lets the test register routes and settings, then
/// start()s it on 127.0.0.1 with port 0. The destructor stop()s it.
class test_server {
public:
    using setup_fn = std::function<void(tern::app&)>;

    /// A server with the test_config() settings and the routes `setup` registers.
    explicit test_server(const setup_fn& setup = {}, tern::config settings = test_config())
        : app_(std::move(settings)) {
        app_.get(alive_path, [](tern::context& ctx) { ctx.text("alive"); });
        if (setup) setup(app_);
        app_.start("127.0.0.1", 0);
    }

    ~test_server() {
        try {
            app_.stop();
        } catch (...) {
            // A destructor must not throw; the test has already reported what went wrong.
        }
    }

    test_server(const test_server&) = delete;
    test_server& operator=(const test_server&) = delete;

    /// The bound port.
    std::uint16_t port() const noexcept { return app_.port(); }
    /// The running app, e.g. to call stop() or check that setters now throw.
    tern::app& app() noexcept { return app_; }
    /// A new client connected to this server.
    raw_client client() const { return raw_client(port()); }
    /// Stops the server (the destructor does it too).
    void stop() { app_.stop(); }

private:
    tern::app app_;
};

/// Sends `bytes` on a new connection to `server` and reads one response.
inline response fetch(const test_server& server, std::string_view bytes) {
    raw_client c = server.client();
    c.send(bytes);
    return c.read_response();
}

/// Checks the headers every response carries: an HTTP/1.1 status line and an IMF-fixdate
/// Date; a Content-Length except on 1xx and 204, which carry neither it nor a body.
inline void check_common_headers(const response& r) {
    INFO(describe(r));
    CHECK(r.version == "HTTP/1.1");
    const auto date = r.header("Date");
    REQUIRE(date.has_value());
    CHECK(is_imf_fixdate(*date));
    CHECK(r.header_count("Date") == 1);
    CHECK_FALSE(r.header("Transfer-Encoding").has_value());
    if ((r.status >= 100 && r.status < 200) || r.status == 204) {
        CHECK_FALSE(r.header("Content-Length").has_value());
        CHECK(r.body.empty());
    } else {
        CHECK(r.header_count("Content-Length") == 1);
    }
}

/// Checks that a fresh client gets 200 "alive" from the server at `port`.
inline void check_still_serving(std::uint16_t port) {
    raw_client fresh(port);
    fresh.send(get_request(alive_path));
    const response r = fresh.read_response();
    INFO(describe(r));
    CHECK(r.status == 200);
    CHECK(r.body == "alive");
}

/// Checks that `r` announced the close, that the server then closed `c` without sending
/// anything more, and that a fresh client is still served.
inline void check_closed_and_still_serving(raw_client& c, const response& r, std::uint16_t port) {
    INFO(describe(r));
    const auto connection = r.header("Connection");
    REQUIRE(connection.has_value());
    CHECK(has_token(*connection, "close"));
    CHECK(c.closed_by_peer());
    CHECK(c.buffered().empty());
    check_still_serving(port);
}

/// Sends `bytes` on a new connection and expects one response with `status`, then the
/// close, then a server that still serves a fresh client. Returns the response.
inline response expect_rejected(const test_server& server, std::string_view bytes, int status) {
    raw_client c = server.client();
    c.send(bytes);
    const response r = c.read_response();
    INFO("request: " << bytes);
    INFO("response: " << describe(r));
    CHECK(r.status == status);
    check_common_headers(r);
    check_closed_and_still_serving(c, r, server.port());
    return r;
}

/// One named raw-byte case of a table-driven wire test: the bytes and the status expected.
struct wire_case {
    std::string_view name;
    std::string bytes;
    int status;
};

/// expect_rejected for a named case, so a failure says which case it was.
inline void expect_case(const test_server& server, const wire_case& c) {
    INFO("case: " << c.name);
    expect_rejected(server, c.bytes, c.status);
}

}  // namespace tern_test

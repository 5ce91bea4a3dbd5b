#pragma once
/// @file quic_app.hpp
/// A tern::app serving HTTP/3 on 127.0.0.1 for the QUIC wire tests (tests/quic), and the
/// steps a test takes with tests/support/quic_client against it: the handshake and control
/// stream, a GET and its answer.

#include <catch2/catch.hpp>

#include "support/quic_client.hpp"
#include "support/temp_dir.hpp"

#include <tern/app.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <string>
#include <string_view>
#include <utility>

namespace tern_test {

/// A UDP port of 127.0.0.1 that was free a moment ago (bound to port 0, read, closed):
/// app.http3 takes a port number, not 0.
inline std::uint16_t free_udp_port() {
    const int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    REQUIRE(fd >= 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof a;
    const bool bound = ::bind(fd, reinterpret_cast<const sockaddr*>(&a), sizeof a) == 0 &&
                       ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &length) == 0;
    ::close(fd);
    REQUIRE(bound);
    return ntohs(a.sin_port);
}

/// A self-signed certificate for 127.0.0.1 made with the openssl command in a directory of
/// its own (GnuTLS reads certificate files, not PEM text).
struct quic_cert_files {
    temp_dir dir;
    std::string cert = (dir.path / "cert.pem").string();
    std::string key = (dir.path / "key.pem").string();
    quic_cert_files() {
        const auto cmd =
            "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes "
            "-days 1 -subj /CN=127.0.0.1 -keyout " +
            key + " -out " + cert + " 2>/dev/null";
        REQUIRE(std::system(cmd.c_str()) == 0);
    }
};

/// An app answering "hi" at "/" over HTTP/3 on `port` (and over HTTPS on a TCP port beside
/// it), counting the requests its handler ran for. Started by the constructor, stopped by
/// the destructor.
struct quic_app {
    quic_cert_files files;
    tern::app app;
    std::uint16_t port = free_udp_port();
    std::atomic<std::uint64_t> handled{0};

    /// `more` adds a test's own routes before the start.
    explicit quic_app(tern::config settings = {}, const std::function<void(tern::app&)>& more = {})
        : app(std::move(settings)) {
        if (more) more(app);
        app.get("/", [this](tern::context& ctx) {
            ++handled;
            ctx.text("hi");
        });
        app.get("/protocol", [](tern::context& ctx) { ctx.text(std::string(ctx.protocol())); });
        app.tls(files.cert, files.key);
        app.http3(port);
        app.start("127.0.0.1", 0);
    }
    ~quic_app() { app.stop(); }
    quic_app(const quic_app&) = delete;
    quic_app& operator=(const quic_app&) = delete;
};

/// Adds `POST /size`, answering the size of the request's body (for `quic_app`'s `more`).
inline void size_route(tern::app& app) {
    app.post("/size", [](tern::context& ctx) { ctx.text(std::to_string(ctx.body().size())); });
}

/// Completes the handshake (10 s at most) and opens the client's control stream (an HTTP/3
/// client must have one).
inline void start_h3(quic_client& c) {
    REQUIRE(c.handshake(std::chrono::seconds(10)));
    const auto control = c.open_uni();
    REQUIRE(control >= 0);
    c.send(control, h3_control_stream(), false);
}

/// GETs `path` on a new stream (waiting for the stream limit if it must) and pumps until the
/// answer has ended or been reset (10 s at most each): what came back on that stream.
inline quic_client::stream_state h3_fetch(quic_client& c, std::string_view path) {
    std::int64_t id = -1;
    REQUIRE(c.pump_until([&] { return (id = c.open_bidi()) >= 0; }, std::chrono::seconds(10)));
    c.send(id, h3_get(path), true);
    c.pump_until(
        [&] {
            const auto s = c.stream(id);
            return s.ended || s.reset;
        },
        std::chrono::seconds(10));
    INFO(c.close_reason());
    REQUIRE_FALSE(c.closed());
    return c.stream(id);
}

}  // namespace tern_test

// QUIC paths (RFC 9000 §8, §9; docs/http3.md, "Paths"): a connection sends to the address
// ngtcp2 has for its path, never to the source of a datagram that only names it. Another
// address gets nothing for datagrams that do not decrypt, and at most three times what came
// from it for real packets until it answers a PATH_CHALLENGE (it never does here). The real
// client's download goes on. The "victim" is a UDP socket on 127.0.0.2, which reaches the
// server on 127.0.0.1 over loopback and counts what the server sends it. Built only with
// TERN_HTTP3.

#include <catch2/catch.hpp>

#include "support/quic_app.hpp"
#include "support/quic_client.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace wire_test_quic_paths {

using namespace std::chrono_literals;
using tern_test::h3_body;
using tern_test::h3_get;
using tern_test::h3_status;
using tern_test::quic_app;
using tern_test::quic_client;
using tern_test::start_h3;

constexpr std::size_t answer_size = 4 << 20;

/// A UDP socket bound to 127.0.0.2 that counts the bytes sent to it.
struct victim {
    int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    sockaddr_in server{};
    std::size_t received = 0;
    std::size_t sent = 0;

    explicit victim(std::uint16_t port) {
        REQUIRE(fd >= 0);
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(0x7f000002);  // 127.0.0.2
        REQUIRE(::bind(fd, reinterpret_cast<const sockaddr*>(&a), sizeof a) == 0);
        server.sin_family = AF_INET;
        server.sin_port = htons(port);
        server.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    }
    ~victim() { ::close(fd); }
    victim(const victim&) = delete;
    victim& operator=(const victim&) = delete;

    void send(const std::vector<std::uint8_t>& bytes) {
        if (::sendto(fd, bytes.data(), bytes.size(), 0, reinterpret_cast<const sockaddr*>(&server),
                     sizeof server) > 0) {
            sent += bytes.size();
        }
    }
    /// Reads what has come so far.
    void drain() {
        std::vector<std::uint8_t> buffer(65536);
        for (;;) {
            const auto n = ::recv(fd, buffer.data(), buffer.size(), 0);
            if (n <= 0) return;
            received += static_cast<std::size_t>(n);
        }
    }
};

/// The app with `GET /big`, 4 MiB.
void big_route(tern::app& app) {
    app.get("/big", [](tern::context& ctx) { ctx.result(std::string(answer_size, 'b')); });
}

/// Starts `GET /big` on a new stream and pumps until some of the answer has come.
std::int64_t start_download(quic_client& c) {
    const auto id = c.open_bidi();
    REQUIRE(id >= 0);
    c.send(id, h3_get("/big"), true);
    REQUIRE(c.pump_until([&] { return c.stream(id).bytes.size() > 256 * 1024; }, 10s));
    return id;
}

/// Pumps until the answer on `id` has ended (30 s at most), reading what reaches `v`
/// meanwhile, and checks the answer whole.
void finish_download(quic_client& c, std::int64_t id, victim& v) {
    const auto until = std::chrono::steady_clock::now() + 30s;
    while (!c.stream(id).ended && !c.stream(id).reset && !c.closed() &&
           std::chrono::steady_clock::now() < until) {
        c.pump(20ms);
        v.drain();
    }
    const auto s = c.stream(id);
    INFO(c.close_reason() << "; " << s.bytes.size() << " bytes, ended " << s.ended);
    REQUIRE_FALSE(c.closed());
    CHECK(h3_status(s.bytes) == 200);
    CHECK(h3_body(s.bytes).size() == answer_size);
    v.drain();
}

TEST_CASE(
    "quic paths: datagrams that name a connection but do not decrypt, from another address, "
    "draw nothing to that address and the download goes on",
    "[http3]") {
    // Before the fix the connection took every datagram's source as its peer: each of these
    // drew the connection's next packets to 127.0.0.2 (116-138 KB in the outside attack).
    quic_app server({}, big_route);
    quic_client c(server.port);
    start_h3(c);
    const auto id = start_download(c);
    victim v(server.port);
    const auto cid = c.server_cid();
    for (int i = 0; i < 200; ++i) {
        // A short header (fixed bit set), the connection's ID, then 60 bytes in all.
        std::vector<std::uint8_t> bogus{0x41};
        bogus.insert(bogus.end(), cid.begin(), cid.end());
        while (bogus.size() < 60) {
            bogus.push_back(
                static_cast<std::uint8_t>(static_cast<std::size_t>(i) * 7 + bogus.size()));
        }
        v.send(bogus);
        c.pump(0ms);
        v.drain();
    }
    finish_download(c, id, v);
    CHECK(v.received == 0);
}

TEST_CASE(
    "quic paths: real packets from an address that never answers draw at most three times "
    "their bytes there, and the client's download goes on",
    "[http3]") {
    // RFC 9000 §8.1 and §9.3: until the new path is validated (PATH_CHALLENGE answered),
    // the server sends at most 3x what it received on it, and when the validation fails it
    // goes back to the old path (§9.3.2). Before the fix it sent everything to the latest
    // source (12-54x in the outside attack). Each diverted packet stalls the download for a
    // validation's timeout (about 3 s here), so three, not twenty: ngtcp2 0.12 set no timer
    // for that timeout once the amplification limit stopped its probes, and the download
    // stalled until the stream's write deadline without tern's poll (connection.cpp).
    quic_app server({}, big_route);
    quic_client c(server.port);
    start_h3(c);
    const auto id = start_download(c);
    victim v(server.port);
    c.divert(v.fd, 3);
    finish_download(c, id, v);
    INFO("sent from 127.0.0.2: " << c.diverted_bytes() << ", sent to it: " << v.received);
    CHECK(c.diverted_bytes() > 0);
    CHECK(v.received <= 3 * c.diverted_bytes());
}

}  // namespace wire_test_quic_paths

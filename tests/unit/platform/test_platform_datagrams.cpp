// The platform seam's datagram calls (src/platform/datagrams.hpp) over UDP on 127.0.0.1,
// whichever implementation this build compiled (TERN_IO, docs/platforms.md): a batch per call
// on Linux, one per call on the portable path, the same results.

#include "platform/datagrams.hpp"
#include "platform/socket_api.hpp"

#include <catch2/catch.hpp>

#if !defined(_WIN32)
#include <fcntl.h>
#endif

#include <algorithm>
#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace unit_test_platform_datagrams {

namespace platform = tern::detail::platform;

namespace {

// A non-blocking UDP socket bound to 127.0.0.1 on a free port, and its address.
struct udp {
    platform::native_socket fd = platform::open_datagram_socket(AF_INET);
    sockaddr_in address{};
    udp() {
        REQUIRE(fd != platform::invalid_socket);
        address.sin_family = AF_INET;
        address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        REQUIRE(::bind(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) == 0);
        platform::socket_length length = sizeof address;
        REQUIRE(::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0);
    }
    ~udp() { platform::close_socket(fd); }
    udp(const udp&) = delete;
    udp& operator=(const udp&) = delete;
};

std::span<const std::uint8_t> bytes_of(const std::string& s) {
    return {reinterpret_cast<const std::uint8_t*>(s.data()), s.size()};
}

}  // namespace

TEST_CASE("a datagram socket is non-blocking and close-on-exec, and reads none when none waits",
          "[platform]") {
    udp u;
#if !defined(_WIN32)
    // Windows: no descriptor flags to read (a Winsock socket is made non-blocking and not
    // inherited; the read of none below shows the first).
    CHECK((::fcntl(u.fd, F_GETFL) & O_NONBLOCK) != 0);
    CHECK((::fcntl(u.fd, F_GETFD) & FD_CLOEXEC) != 0);
#endif
    std::array<std::uint8_t, 64> buffer{};
    sockaddr_storage from{};
    std::array<platform::incoming_datagram, 1> slots{{{buffer, &from}}};
    CHECK(platform::receive_datagrams(u.fd, slots) == 0);
}

TEST_CASE(
    "datagrams sent in one call arrive in order, each with its sender, and a short batch "
    "means none is left",
    "[platform]") {
    udp sender;
    udp receiver;
    const std::vector<std::string> texts{"one", "two", "three"};
    std::vector<platform::outgoing_datagram> out;
    for (const auto& t : texts) {
        out.push_back({bytes_of(t), reinterpret_cast<const sockaddr*>(&receiver.address),
                       sizeof receiver.address});
    }
    std::span<const platform::outgoing_datagram> left(out);
    while (!left.empty()) {
        const std::size_t done = platform::send_datagrams(sender.fd, left);
        REQUIRE(done >= 1);
        left = left.subspan(done);
    }
    REQUIRE(platform::wait_socket(receiver.fd, false, 2000) == 1);
    std::array<std::array<std::uint8_t, 64>, 4> buffers{};
    std::array<sockaddr_storage, 4> from{};
    std::array<platform::incoming_datagram, 4> slots{};
    for (std::size_t i = 0; i < slots.size(); ++i) slots[i] = {buffers[i], &from[i]};
    std::size_t got = 0;
    for (int tries = 0; got < texts.size() && tries < 100; ++tries) {
        got += platform::receive_datagrams(receiver.fd, std::span(slots).subspan(got));
        if (got < texts.size()) platform::wait_socket(receiver.fd, false, 20);
    }
    REQUIRE(got == texts.size());
    for (std::size_t i = 0; i < got; ++i) {
        CHECK(std::string(reinterpret_cast<const char*>(buffers[i].data()), slots[i].size) ==
              texts[i]);
        REQUIRE(slots[i].from_length == sizeof(sockaddr_in));
        const auto* a = reinterpret_cast<const sockaddr_in*>(&from[i]);
        CHECK(a->sin_port == sender.address.sin_port);
    }
    CHECK(platform::receive_datagrams(receiver.fd, slots) == 0);
}

// Runs of full-size datagrams to one address, a shorter one ending each run, interleaved with
// datagrams to a second address: on Linux with segmentation a run is one message the kernel
// cuts apart; each datagram must still arrive whole, alone, and in its order.
void send_runs_and_check(bool segmented) {
    platform::segment_datagrams(segmented);
    udp sender;
    udp first;
    udp second;
    // Each payload starts with its number, so that a datagram out of order, cut or merged
    // with another is seen; `payloads` and `out` are filled before any is sent (`out` points
    // into `payloads`).
    std::vector<std::string> payloads;
    std::vector<const udp*> targets;
    std::vector<std::string> to_first;
    std::vector<std::string> to_second;
    const auto add = [&](const udp& to, std::size_t size) {
        std::string p = size == 0 ? std::string() : std::to_string(payloads.size()) + ":";
        p.resize(size, 'x');
        payloads.push_back(p);
        targets.push_back(&to);
        (&to == &first ? to_first : to_second).push_back(p);
    };
    // 70 full ones then a short one (past the kernel's 64 segments a message), a lone one
    // elsewhere, three full and a short, one longer than the run's size, an empty one.
    for (int i = 0; i < 70; ++i) add(first, 1200);
    add(first, 300);
    add(second, 1200);
    for (int i = 0; i < 3; ++i) add(first, 1000);
    add(first, 10);
    add(first, 1100);
    add(second, 0);
    std::vector<platform::outgoing_datagram> out;
    for (std::size_t i = 0; i < payloads.size(); ++i) {
        out.push_back({bytes_of(payloads[i]),
                       reinterpret_cast<const sockaddr*>(&targets[i]->address),
                       sizeof targets[i]->address});
    }
    std::span<const platform::outgoing_datagram> left(out);
    while (!left.empty()) {
        const std::size_t done = platform::send_datagrams(sender.fd, left);
        REQUIRE(done >= 1);
        REQUIRE(done <= left.size());
        left = left.subspan(done);
    }
    const auto receive_all = [](udp& at, std::size_t expected) {
        std::vector<std::string> got;
        std::vector<std::array<std::uint8_t, 2048>> buffers(16);
        std::array<sockaddr_storage, 16> from{};
        std::array<platform::incoming_datagram, 16> slots{};
        for (int tries = 0; got.size() < expected && tries < 200; ++tries) {
            for (std::size_t k = 0; k < slots.size(); ++k) slots[k] = {buffers[k], &from[k]};
            const std::size_t n = platform::receive_datagrams(at.fd, slots);
            for (std::size_t k = 0; k < n; ++k) {
                got.emplace_back(reinterpret_cast<const char*>(buffers[k].data()), slots[k].size);
            }
            if (n == 0) platform::wait_socket(at.fd, false, 20);
        }
        return got;
    };
    CHECK(receive_all(first, to_first.size()) == to_first);
    CHECK(receive_all(second, to_second.size()) == to_second);
    platform::segment_datagrams(true);
}

TEST_CASE("runs of datagrams to one address arrive whole and in order, segmented by the kernel",
          "[platform]") {
    send_runs_and_check(true);
}

TEST_CASE("runs of datagrams to one address arrive whole and in order, each sent on its own",
          "[platform]") {
    send_runs_and_check(false);
}

}  // namespace unit_test_platform_datagrams

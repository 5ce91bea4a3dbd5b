// quic::datagram_batch (src/quic/address.hpp): the datagrams one call into the QUIC core
// made, their bytes in one buffer kept from batch to batch.

#include <catch2/catch.hpp>

#include "quic/address.hpp"
#include "support/allocation_counter.hpp"

#include <netinet/in.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

namespace unit_test_quic_datagram_batch {

using tern::detail::quic::address;
using tern::detail::quic::datagram_batch;

address port(std::uint16_t p) {
    address a;
    sockaddr_in in{};
    in.sin_family = AF_INET;
    in.sin_port = htons(p);
    in.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    std::memcpy(&a.storage, &in, sizeof in);
    a.length = sizeof in;
    return a;
}

std::uint16_t port_of(const address& a) {
    sockaddr_in in{};
    std::memcpy(&in, &a.storage, sizeof in);
    return ntohs(in.sin_port);
}

TEST_CASE("quic datagram batch: datagrams keep their bytes and addresses as the buffer grows",
          "[quic]") {
    datagram_batch batch;
    CHECK(batch.empty());
    // 100 datagrams of up to 1,452 bytes asked for, each of a different length and fill:
    // the buffer grows several times past its first 16 KiB while earlier ones stay right.
    for (std::uint16_t i = 0; i < 100; ++i) {
        const auto room = batch.room(1452);
        REQUIRE(room.size() == 1452);
        const std::size_t n = 1 + (i * 37U) % 1452;
        std::fill_n(room.begin(), n, static_cast<std::uint8_t>(i));
        batch.commit(port(static_cast<std::uint16_t>(1000 + i)), n);
    }
    REQUIRE(batch.size() == 100);
    std::uint16_t i = 0;
    for (const auto d : batch) {
        const std::size_t n = 1 + (i * 37U) % 1452;
        REQUIRE(d.bytes.size() == n);
        CHECK(std::all_of(d.bytes.begin(), d.bytes.end(), [&](auto b) { return b == i; }));
        CHECK(port_of(d.to) == 1000 + i);
        ++i;
    }
    CHECK(i == 100);
}

TEST_CASE("quic datagram batch: a room not committed adds nothing and clear keeps the memory",
          "[quic]") {
    datagram_batch batch;
    auto room = batch.room(1200);
    room[0] = 7;
    batch.commit(port(1), 1);
    (void)batch.room(1452);  // asked for, nothing written: as a flush that made no packet
    REQUIRE(batch.size() == 1);
    CHECK(batch[0].bytes.size() == 1);
    CHECK(batch[0].bytes[0] == 7);

    const auto* before = batch.room(1452).data();
    batch.clear();
    CHECK(batch.empty());
    // After clear the next datagram starts where the first did, in the same memory.
    const auto again = batch.room(1452);
    CHECK(again.data() + 1 == before);
    again[0] = 9;
    batch.commit(port(2), 1);
    REQUIRE(batch.size() == 1);
    CHECK(batch[0].bytes[0] == 9);
    CHECK(port_of(batch[0].to) == 2);
}

TEST_CASE("quic datagram batch: once grown, a batch of the same datagrams allocates nothing",
          "[quic]") {
    datagram_batch batch;
    const auto fill = [&] {
        for (int i = 0; i < 40; ++i) {
            const auto room = batch.room(1452);
            room[0] = 1;
            batch.commit(port(443), 1200);
        }
    };
    fill();
    batch.clear();
    const auto before = tern_test::allocation_count();
    fill();
    CHECK(tern_test::allocation_count() == before);
    CHECK(batch.size() == 40);
}

}  // namespace unit_test_quic_datagram_batch

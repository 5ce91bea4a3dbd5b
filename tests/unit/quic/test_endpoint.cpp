// The stateless half of the QUIC server (src/quic/endpoint.hpp), without sockets: Version
// Negotiation, Retry and its token, stateless resets, and the datagrams it drops.

#include <catch2/catch.hpp>

#include "quic/endpoint.hpp"

#include <arpa/inet.h>

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <vector>

namespace unit_test_quic_endpoint {

using tern::detail::quic::address;
using tern::detail::quic::datagram_batch;
using tern::detail::quic::endpoint;
using tern::detail::quic::endpoint_secret;
using tern::detail::quic::endpoint_settings;
using tern::detail::quic::verdict;
using bytes = std::vector<std::uint8_t>;

address loopback(std::uint16_t port) {
    address a;
    auto* in = reinterpret_cast<sockaddr_in*>(&a.storage);
    in->sin_family = AF_INET;
    in->sin_port = htons(port);
    in->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.length = sizeof(sockaddr_in);
    return a;
}

void put32(bytes& b, std::uint32_t v) {
    for (int shift = 24; shift >= 0; shift -= 8) b.push_back(static_cast<std::uint8_t>(v >> shift));
}

// A long-header packet as a client's first datagram carries it (the payload is not
// encrypted: the endpoint reads only the header), padded to 1200 bytes.
bytes initial(std::uint32_t version, const bytes& dcid, const bytes& token) {
    bytes b{0xc0};  // long header, fixed bit, Initial, 1-byte packet number
    put32(b, version);
    b.push_back(static_cast<std::uint8_t>(dcid.size()));
    b.insert(b.end(), dcid.begin(), dcid.end());
    b.push_back(8);
    b.insert(b.end(), 8, 0x5c);                                        // the client's connection ID
    b.push_back(0x40 | static_cast<std::uint8_t>(token.size() >> 8));  // 2-byte varint
    b.push_back(static_cast<std::uint8_t>(token.size()));
    b.insert(b.end(), token.begin(), token.end());
    const std::size_t rest = 1200 - b.size() - 2;
    b.push_back(0x40 | static_cast<std::uint8_t>(rest >> 8));
    b.push_back(static_cast<std::uint8_t>(rest));
    b.resize(1200, 0);
    return b;
}

// The token of a Retry packet (RFC 9000, 17.2.5): after the header, before the 16-byte tag.
bytes retry_token(std::span<const std::uint8_t> retry) {
    std::size_t at = 5;
    at += 1U + retry[at];  // destination connection ID
    at += 1U + retry[at];  // source connection ID
    return {retry.begin() + static_cast<std::ptrdiff_t>(at), retry.end() - 16};
}

// The connection ID the server picked in a Retry: the client's next destination.
bytes retry_scid(std::span<const std::uint8_t> retry) {
    const std::size_t at = 6U + retry[5];
    return {retry.begin() + static_cast<std::ptrdiff_t>(at + 1),
            retry.begin() + static_cast<std::ptrdiff_t>(at + 1 + retry[at])};
}

const bytes client_dcid(16, 0xa7);
constexpr std::uint64_t now = 1'000'000'000;

TEST_CASE("quic endpoint: an Initial without a token gets a Retry whose token lets it in") {
    endpoint ep;
    datagram_batch out;
    const auto client = loopback(40000);
    REQUIRE(ep.receive(initial(1, client_dcid, {}), loopback(443), client, now, out) ==
            verdict::retry);
    REQUIRE(out.size() == 1);
    const auto& retry = out[0].bytes;
    CHECK((retry[0] & 0xf0) == 0xf0);  // long header, fixed bit, type Retry
    CHECK(std::memcmp(&retry[1], "\0\0\0\1", 4) == 0);
    const auto token = retry_token(retry);
    REQUIRE(!token.empty());
    const auto dcid = retry_scid(retry);
    CHECK(dcid.size() == 18);

    datagram_batch none;
    CHECK(ep.receive(initial(1, dcid, token), loopback(443), client, now + 1000, none) ==
          verdict::accepted);
    // Bound to the address it was sent to, and to its lifetime.
    CHECK(ep.receive(initial(1, dcid, token), loopback(443), loopback(40001), now, none) ==
          verdict::bad_token);
    CHECK(ep.receive(initial(1, dcid, token), loopback(443), client, now + 60'000'000'000ULL,
                     none) == verdict::bad_token);
    // Another endpoint's secret.
    endpoint other;
    CHECK(other.receive(initial(1, dcid, token), loopback(443), client, now, none) ==
          verdict::bad_token);
    CHECK(none.empty());
}

TEST_CASE("quic endpoint: an unknown version gets Version Negotiation listing QUIC v1") {
    endpoint ep;
    datagram_batch out;
    REQUIRE(ep.receive(initial(0x1a2a3a4a, client_dcid, {}), loopback(443), loopback(40000), now,
                       out) == verdict::version_negotiation);
    REQUIRE(out.size() == 1);
    const auto& vn = out[0].bytes;
    CHECK((vn[0] & 0x80) == 0x80);
    CHECK(std::memcmp(&vn[1], "\0\0\0\0", 4) == 0);
    CHECK(std::memcmp(&vn[vn.size() - 4], "\0\0\0\1", 4) == 0);
    // Not for a datagram too small to be an Initial (no amplification).
    auto small = initial(0x1a2a3a4a, client_dcid, {});
    small.resize(100);
    out.clear();
    CHECK(ep.receive(small, loopback(443), loopback(40000), now, out) == verdict::dropped);
    CHECK(out.empty());
}

TEST_CASE("quic endpoint: a short header for an unknown connection ID gets a stateless reset") {
    endpoint ep;
    bytes packet(60, 0x33);
    packet[0] = 0x41;
    const bytes cid(packet.begin() + 1, packet.begin() + 19);
    datagram_batch out;
    REQUIRE(ep.receive(packet, loopback(443), loopback(40000), now, out) ==
            verdict::stateless_reset);
    REQUIRE(out.size() == 1);
    const auto& reset = out[0].bytes;
    CHECK(reset.size() == 41);
    CHECK(reset.size() < packet.size());
    CHECK((reset[0] & 0xc0) == 0x40);
    const auto token = ep.reset_token(cid);
    CHECK(std::equal(token.begin(), token.end(), reset.end() - 16));

    // Too short to answer with something shorter: dropped.
    packet.resize(30);
    out.clear();
    CHECK(ep.receive(packet, loopback(443), loopback(40000), now, out) == verdict::dropped);
    CHECK(out.empty());
}

TEST_CASE("quic endpoint: packets for a known connection ID go to the connection") {
    endpoint ep;
    const auto cid = ep.new_cid();
    ep.add_cid(cid);
    bytes packet{0x41};
    packet.insert(packet.end(), cid.begin(), cid.end());
    packet.resize(60, 0);
    datagram_batch out;
    CHECK(ep.receive(packet, loopback(443), loopback(40000), now, out) == verdict::to_connection);
    ep.remove_cid(cid);
    CHECK(ep.receive(packet, loopback(443), loopback(40000), now, out) == verdict::stateless_reset);
}

TEST_CASE("quic endpoint: garbage is dropped without an answer") {
    endpoint ep;
    datagram_batch out;
    CHECK(ep.receive(bytes{}, loopback(443), loopback(40000), now, out) == verdict::dropped);
    CHECK(ep.receive(bytes(10, 0xff), loopback(443), loopback(40000), now, out) ==
          verdict::dropped);
    CHECK(ep.receive(bytes(5, 0x00), loopback(443), loopback(40000), now, out) == verdict::dropped);
    auto bad = initial(1, client_dcid, {});
    bad.resize(1000);  // an Initial must fill 1200 bytes
    CHECK(ep.receive(bad, loopback(443), loopback(40000), now, out) == verdict::dropped);
    CHECK(out.empty());
}

endpoint_settings node_of(std::uint8_t node, std::uint8_t nodes) {
    endpoint_settings s;
    s.node = node;
    s.nodes = nodes;
    return s;
}

bytes short_header(const bytes& cid) {
    bytes packet{0x41};
    packet.insert(packet.end(), cid.begin(), cid.end());
    packet.resize(60, 0x33);
    return packet;
}

TEST_CASE("quic endpoint: with nodes, each issues IDs naming it and leaves another's to it") {
    const endpoint_secret secret = endpoint::random_secret();
    endpoint zero(node_of(0, 2), &secret);
    endpoint one(node_of(1, 2), &secret);
    for (int i = 0; i < 20; ++i) {
        CHECK(zero.new_cid()[0] == 0);
        CHECK(one.new_cid()[0] == 1);
    }
    datagram_batch out;
    // A short header for an ID node 0 issued, reaching node 1: not reset, handed over.
    const auto cid = zero.new_cid();
    CHECK(one.receive(short_header(cid), loopback(443), loopback(40000), now, out) ==
          verdict::elsewhere);
    CHECK(one.elsewhere() == 0);
    CHECK(out.empty());
    // Its own IDs it does not know, and IDs whose first byte names no node, it resets.
    CHECK(one.receive(short_header(one.new_cid()), loopback(443), loopback(40000), now, out) ==
          verdict::stateless_reset);
    auto nobody = cid;
    nobody[0] = 7;
    CHECK(one.receive(short_header(nobody), loopback(443), loopback(40000), now, out) ==
          verdict::stateless_reset);
    CHECK(out.size() == 2);

    // An Initial without a token is answered by whichever node it reaches, even when its
    // (client-chosen) ID looks like another node's; the Retry's ID names the node that sent it.
    out.clear();
    bytes looks_like_zero(18, 0x21);
    looks_like_zero[0] = 0;
    const auto client = loopback(40002);
    REQUIRE(one.receive(initial(1, looks_like_zero, {}), loopback(443), client, now, out) ==
            verdict::retry);
    const auto token = retry_token(out[0].bytes);
    const auto dcid = retry_scid(out[0].bytes);
    CHECK(dcid[0] == 1);
    // The client's next Initial, with the token, belongs to node 1 wherever it arrives, and
    // node 1 lets it in.
    datagram_batch none;
    CHECK(zero.receive(initial(1, dcid, token), loopback(443), client, now + 1000, none) ==
          verdict::elsewhere);
    CHECK(zero.elsewhere() == 1);
    CHECK(one.receive(initial(1, dcid, token), loopback(443), client, now + 1000, none) ==
          verdict::accepted);
    CHECK(none.empty());
    // A single endpoint (the default) never hands anything over.
    endpoint alone;
    CHECK(alone.receive(short_header(cid), loopback(443), loopback(40000), now, out) ==
          verdict::stateless_reset);
}

TEST_CASE("quic endpoint: a node past the count is refused") {
    CHECK_THROWS_AS(endpoint(node_of(2, 2)), std::invalid_argument);
    CHECK_THROWS_AS(endpoint(node_of(0, 0)), std::invalid_argument);
}

}  // namespace unit_test_quic_endpoint

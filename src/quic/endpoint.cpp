// The stateless half of the QUIC server: see endpoint.hpp.

#include "quic/endpoint.hpp"

#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>
#include <ngtcp2/ngtcp2.h>
#include <ngtcp2/ngtcp2_crypto.h>

#include <algorithm>
#include <stdexcept>

// Last: GnuTLS's and ngtcp2's functions through the table that loads them on first use.
#include "quic/calls.hpp"

namespace tern::detail::quic {

namespace {

void random_bytes(std::uint8_t* data, std::size_t size) {
    if (gnutls_rnd(GNUTLS_RND_RANDOM, data, size) != 0) {
        throw std::runtime_error("tern: QUIC: no random bytes from GnuTLS");
    }
}

ngtcp2_cid to_cid(const std::uint8_t* data, std::size_t size) {
    ngtcp2_cid cid{};
    ngtcp2_cid_init(&cid, data, std::min<std::size_t>(size, NGTCP2_MAX_CIDLEN));
    return cid;
}

std::string cid_key(std::span<const std::uint8_t> cid) {
    return {reinterpret_cast<const char*>(cid.data()), cid.size()};
}

// The smallest short-header packet answered with a stateless reset: a reset must be
// shorter than what caused it (RFC 9000, 10.3.3), and at least 21 bytes long.
constexpr std::size_t min_reset_trigger = 43;
constexpr std::size_t reset_size = 41;

}  // namespace

endpoint::endpoint(endpoint_settings settings, const endpoint_secret* secret)
    : settings_(settings) {
    if (settings_.cid_length < 8 || settings_.cid_length > NGTCP2_MAX_CIDLEN) {
        throw std::invalid_argument("tern: QUIC connection IDs are 8..20 bytes");
    }
    if (settings_.nodes == 0 || settings_.node >= settings_.nodes) {
        throw std::invalid_argument("tern: QUIC endpoint node out of range");
    }
    secret_ = secret != nullptr ? *secret : random_secret();
}

endpoint_secret endpoint::random_secret() {
    endpoint_secret s{};
    random_bytes(s.data(), s.size());
    return s;
}

bool endpoint::issued_elsewhere(std::span<const std::uint8_t> cid) noexcept {
    // Only IDs of this server's length can be its own; a first byte past the nodes is
    // nobody's (a client's own choice, or garbage): this node answers it.
    if (settings_.nodes < 2 || cid.size() != settings_.cid_length) return false;
    if (cid[0] == settings_.node || cid[0] >= settings_.nodes) return false;
    elsewhere_ = cid[0];
    return true;
}

verdict endpoint::receive(std::span<const std::uint8_t> bytes, const address& /*local*/,
                          const address& remote, std::uint64_t now, datagram_batch& out) {
    if (bytes.empty()) return verdict::dropped;
    if ((bytes[0] & 0x80U) != 0) return on_long(bytes, remote, now, out);
    return on_short(bytes, remote, out);
}

verdict endpoint::on_long(std::span<const std::uint8_t> bytes, const address& remote,
                          std::uint64_t now, datagram_batch& out) {
    ngtcp2_version_cid vc{};
    const int rv =
        ngtcp2_pkt_decode_version_cid(&vc, bytes.data(), bytes.size(), settings_.cid_length);
    if (rv == NGTCP2_ERR_VERSION_NEGOTIATION) {
        // Only for a datagram big enough to be an Initial (RFC 9000, 6.1: no amplification).
        if (bytes.size() < 1200) return verdict::dropped;
        std::uint8_t unused = 0;
        random_bytes(&unused, 1);
        const std::uint32_t versions[] = {NGTCP2_PROTO_VER_V1};
        const auto room = out.room(1200);
        const auto n =
            ngtcp2_pkt_write_version_negotiation(room.data(), room.size(), unused, vc.scid,
                                                 vc.scidlen, vc.dcid, vc.dcidlen, versions, 1);
        if (n < 0) return verdict::dropped;
        out.commit(remote, static_cast<std::size_t>(n));
        return verdict::version_negotiation;
    }
    if (rv != 0) return verdict::dropped;
    if (knows({vc.dcid, vc.dcidlen})) return verdict::to_connection;
    // A Handshake packet, or an Initial with a token, to an ID another node gave out (in its
    // Retry, or for its connection) is that node's; an Initial without a token is answered
    // here whatever its ID (the client chose it).
    const bool theirs = issued_elsewhere({vc.dcid, vc.dcidlen});
    ngtcp2_pkt_hd hd{};
    if (ngtcp2_accept(&hd, bytes.data(), bytes.size()) != 0) {
        return theirs ? verdict::elsewhere : verdict::dropped;
    }
    if (hd.token.len != 0 && theirs) return verdict::elsewhere;
    if (hd.token.len == 0) {
        std::uint8_t token[NGTCP2_CRYPTO_MAX_RETRY_TOKENLEN];
        const auto scid_bytes = new_cid();
        const auto scid = to_cid(scid_bytes.data(), scid_bytes.size());
        const auto tlen =
            ngtcp2_crypto_generate_retry_token(token, secret_.data(), secret_.size(), hd.version,
                                               remote.get(), remote.length, &scid, &hd.dcid, now);
        if (tlen < 0) return verdict::dropped;
        const auto room = out.room(256);
        const auto n =
            ngtcp2_crypto_write_retry(room.data(), room.size(), hd.version, &hd.scid, &scid,
                                      &hd.dcid, token, static_cast<std::size_t>(tlen));
        if (n < 0) return verdict::dropped;
        out.commit(remote, static_cast<std::size_t>(n));
        return verdict::retry;
    }
    ngtcp2_cid odcid{};
    const auto lifetime = static_cast<ngtcp2_duration>(settings_.retry_token_lifetime.count());
    if (hd.token.base[0] != NGTCP2_CRYPTO_TOKEN_MAGIC_RETRY ||
        ngtcp2_crypto_verify_retry_token(&odcid, hd.token.base, hd.token.len, secret_.data(),
                                         secret_.size(), hd.version, remote.get(), remote.length,
                                         &hd.dcid, lifetime, now) != 0) {
        return verdict::bad_token;
    }
    accepted_.original.assign(odcid.data, odcid.data + odcid.datalen);
    accepted_.retry.assign(hd.dcid.data, hd.dcid.data + hd.dcid.datalen);
    accepted_.client.assign(hd.scid.data, hd.scid.data + hd.scid.datalen);
    accepted_.token.assign(hd.token.base, hd.token.base + hd.token.len);
    accepted_.version = hd.version;
    return verdict::accepted;
}

verdict endpoint::on_short(std::span<const std::uint8_t> bytes, const address& remote,
                           datagram_batch& out) {
    if (bytes.size() < 1 + settings_.cid_length) return verdict::dropped;
    const auto cid = bytes.subspan(1, settings_.cid_length);
    if (knows(cid)) return verdict::to_connection;
    if (issued_elsewhere(cid)) return verdict::elsewhere;
    if (bytes.size() < min_reset_trigger) return verdict::dropped;
    const auto token = reset_token(cid);
    std::uint8_t rand[reset_size - NGTCP2_STATELESS_RESET_TOKENLEN];  // its first byte too
    random_bytes(rand, sizeof rand);
    const auto room = out.room(reset_size);
    const auto n =
        ngtcp2_pkt_write_stateless_reset(room.data(), room.size(), token.data(), rand, sizeof rand);
    if (n < 0) return verdict::dropped;
    out.commit(remote, static_cast<std::size_t>(n));
    return verdict::stateless_reset;
}

std::array<std::uint8_t, 16> endpoint::reset_token(std::span<const std::uint8_t> cid) const {
    std::array<std::uint8_t, 16> token{};
    const auto c = to_cid(cid.data(), cid.size());
    if (ngtcp2_crypto_generate_stateless_reset_token(token.data(), secret_.data(), secret_.size(),
                                                     &c) != 0) {
        throw std::runtime_error("tern: QUIC: no stateless reset token");
    }
    return token;
}

std::vector<std::uint8_t> endpoint::new_cid() const {
    std::vector<std::uint8_t> cid(settings_.cid_length);
    random_bytes(cid.data(), cid.size());
    if (settings_.nodes > 1) cid[0] = settings_.node;
    return cid;
}

bool endpoint::knows(std::span<const std::uint8_t> cid) const {
    return std::binary_search(cids_.begin(), cids_.end(), cid_key(cid));
}

void endpoint::add_cid(std::span<const std::uint8_t> cid) {
    auto key = cid_key(cid);
    const auto at = std::lower_bound(cids_.begin(), cids_.end(), key);
    if (at == cids_.end() || *at != key) cids_.insert(at, std::move(key));
}

void endpoint::remove_cid(std::span<const std::uint8_t> cid) {
    const auto key = cid_key(cid);
    const auto at = std::lower_bound(cids_.begin(), cids_.end(), key);
    if (at != cids_.end() && *at == key) cids_.erase(at);
}

}  // namespace tern::detail::quic

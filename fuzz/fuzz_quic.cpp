// libFuzzer harness of the QUIC server core's datagram input (src/quic: the endpoint's
// stateless answers, the table of connection IDs, connections made for Initials that carry
// a valid Retry token, their expiries and their close). The input is records, each a byte
// whose low 2 bits pick what follows and whose bit 2 picks one of two client addresses:
//   0  a raw datagram: a 2-byte length (mod 1,500), that many bytes;
//   1  an Initial with a valid token (the harness asks for a Retry first and takes its token
//      and connection ID): a byte of header bits, a byte for the length of the client's
//      connection ID (mod 21), a length byte, that many bytes of payload (padded to 1,200
//      bytes when bit 3 of the record byte is set);
//   2  a short header to a connection ID the server gave out in a long header: an index byte,
//      a length byte, that many bytes of payload;
//   3  time passes: a byte times 5 ms, then the expiries due.
// It traps when a stateless answer (Retry, Version Negotiation, stateless reset) is larger
// than the datagram that caused it (no amplification without state), when a datagram goes
// to an address no client used, when a token lets in more connections than there are
// tokens, or when more connections are in their handshake than the cap (3 here) allows. After the
// input every connection is closed.

#include "quic/server.hpp"

#include <ngtcp2/ngtcp2.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iterator>
#include <memory>
#include <set>
#include <span>
#include <string>
#include <vector>

namespace {

namespace quic = tern::detail::quic;
using bytes = std::vector<std::uint8_t>;

void check(bool ok) {
    if (!ok) __builtin_trap();
}

quic::address ipv4(const char* ip, std::uint16_t port) {
    quic::address a;
    auto* in = reinterpret_cast<sockaddr_in*>(&a.storage);
    in->sin_family = AF_INET;
    in->sin_port = htons(port);
    ::inet_pton(AF_INET, ip, &in->sin_addr);
    a.length = sizeof(sockaddr_in);
    return a;
}

bool same(const quic::address& a, const quic::address& b) {
    return a.length == b.length && std::memcmp(&a.storage, &b.storage, a.length) == 0;
}

constexpr std::size_t max_handshakes = 3;

// The server, made once: its certificate made with the openssl command into a temporary
// directory (GnuTLS reads files).
quic::server& core() {
    static const auto made = [] {
        const auto dir = std::filesystem::temp_directory_path() /
                         ("tern-fuzz-quic-" + std::to_string(::getpid()));
        std::filesystem::create_directories(dir);
        const auto cert = (dir / "cert.pem").string();
        const auto key = (dir / "key.pem").string();
        const auto cmd =
            "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes "
            "-days 2 -subj /CN=localhost -keyout " +
            key + " -out " + cert + " >/dev/null 2>&1";
        check(std::system(cmd.c_str()) == 0);
        // Small caps and a short handshake timeout, so that inputs reach them: the cap on
        // connections still in their handshake and their expiry (docs/http3.md).
        quic::connection_settings settings;
        settings.max_connections = 8;
        settings.max_handshakes = max_handshakes;
        settings.handshake_timeout = std::chrono::milliseconds(300);
        auto s = std::make_unique<quic::server>(cert, key, settings);
        std::filesystem::remove_all(dir);
        return s;
    }();
    return *made;
}

// One input's run: the clock, the addresses, the tokens and connection IDs learnt.
class run {
public:
    run() : server_(core()) {}

    void datagram(const bytes& b, bool second) {
        out_.clear();
        const auto& from = second ? b_ : a_;
        const auto v = server_.receive(b, local_, from, now_, out_);
        if (v == quic::verdict::retry || v == quic::verdict::version_negotiation ||
            v == quic::verdict::stateless_reset) {
            std::size_t sent = 0;
            for (const auto& d : out_) sent += d.bytes.size();
            check(sent <= b.size());
        }
        after();
    }

    void elapse(std::uint64_t ns) {
        now_ += ns;
        out_.clear();
        if (server_.expiry() <= now_) server_.on_expiry(now_, out_);
        server_.write_woken(now_, out_);
        after();
    }

    // An Initial whose token the server made for this address (asked for once per address).
    bytes initial(bool second, std::uint8_t bits, std::size_t scid_length,
                  std::span<const std::uint8_t> payload, bool pad) {
        auto& retry = second ? retry_b_ : retry_a_;
        if (retry.empty()) {
            out_.clear();
            server_.receive(initial_bytes(0xc0, bytes(16, 0xa7), 8, {}, {}, true), local_,
                            second ? b_ : a_, now_, out_);
            if (out_.size() == 1) retry.assign(out_[0].bytes.begin(), out_[0].bytes.end());
            if (retry.size() < 7 + 16) return {};
            ++tokens_;
        }
        // RFC 9000 17.2.5: the Retry's source connection ID, then the token before its tag.
        std::size_t at = 5;
        at += 1U + retry[at];
        if (at >= retry.size()) return {};
        const std::size_t cid_at = at + 1;
        at += 1U + retry[at];
        if (at + 16 > retry.size()) return {};
        const bytes dcid(retry.begin() + static_cast<std::ptrdiff_t>(cid_at),
                         retry.begin() + static_cast<std::ptrdiff_t>(at));
        const bytes token(retry.begin() + static_cast<std::ptrdiff_t>(at), retry.end() - 16);
        return initial_bytes(static_cast<std::uint8_t>(0xc0 | (bits & 0x0f)), dcid, scid_length,
                             token, payload, pad);
    }

    // A short header to the index-th connection ID a long header from the server carried.
    bytes short_header(std::size_t index, std::span<const std::uint8_t> payload) const {
        if (cids_.empty()) return {};
        auto it = cids_.begin();
        std::advance(it, static_cast<std::ptrdiff_t>(index % cids_.size()));
        bytes b{0x40};
        b.insert(b.end(), it->begin(), it->end());
        b.insert(b.end(), payload.begin(), payload.end());
        return b;
    }

    ~run() {
        out_.clear();
        server_.close_all(0, now_, out_);
        check(server_.connections() == 0);
    }

private:
    static bytes initial_bytes(std::uint8_t first, const bytes& dcid, std::size_t scid_length,
                               const bytes& token, std::span<const std::uint8_t> payload,
                               bool pad) {
        bytes b{first, 0, 0, 0, 1, static_cast<std::uint8_t>(dcid.size())};
        b.insert(b.end(), dcid.begin(), dcid.end());
        b.push_back(static_cast<std::uint8_t>(scid_length));
        b.insert(b.end(), scid_length, 0x5c);
        b.push_back(static_cast<std::uint8_t>(0x40 | (token.size() >> 8)));  // 2-byte varint
        b.push_back(static_cast<std::uint8_t>(token.size()));
        b.insert(b.end(), token.begin(), token.end());
        const std::size_t header = b.size() + 2;
        const std::size_t length =
            pad && header + payload.size() < 1200 ? 1200 - header : payload.size();
        b.push_back(static_cast<std::uint8_t>(0x40 | (length >> 8)));
        b.push_back(static_cast<std::uint8_t>(length));
        b.insert(b.end(), payload.begin(), payload.end());
        b.resize(header + length, 0);
        return b;
    }

    void after() {
        for (const auto& d : out_) {
            check(same(d.to, a_) || same(d.to, b_));
            ngtcp2_version_cid vc{};
            if (!d.bytes.empty() && (d.bytes[0] & 0x80) != 0 &&
                ngtcp2_pkt_decode_version_cid(&vc, d.bytes.data(), d.bytes.size(), 18) == 0 &&
                vc.scidlen != 0 && (d.bytes[0] & 0x30) != 0x30) {  // not a Retry's
                cids_.emplace(vc.scid, vc.scid + vc.scidlen);
            }
        }
        check(server_.connections() <= tokens_);
        check(server_.handshaking() <= server_.connections());
        check(server_.handshaking() <= max_handshakes);
    }

    quic::server& server_;
    std::uint64_t now_ = 1'000'000'000'000ULL;
    quic::address local_ = ipv4("127.0.0.1", 443);
    quic::address a_ = ipv4("127.0.0.1", 40000);
    quic::address b_ = ipv4("127.0.0.2", 40001);
    quic::datagram_batch out_;
    bytes retry_a_, retry_b_;
    std::size_t tokens_ = 0;
    std::set<bytes> cids_;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    run r;
    std::size_t at = 0;
    const auto take = [&](std::size_t n) {
        n = std::min(n, size - at);
        const std::span<const std::uint8_t> s(data + at, n);
        at += n;
        return s;
    };
    const auto byte = [&]() -> std::uint8_t { return at < size ? data[at++] : 0; };
    while (at < size) {
        const std::uint8_t op = byte();
        const bool second = (op & 4) != 0;
        switch (op & 3) {
            case 0: {
                const std::size_t n = (std::size_t{byte()} << 8 | byte()) % 1500;
                const auto s = take(n);
                r.datagram(bytes(s.begin(), s.end()), second);
                break;
            }
            case 1: {
                const std::uint8_t bits = byte();
                const std::size_t scid_length = byte() % 21;
                const auto payload = take(byte());
                const auto b = r.initial(second, bits, scid_length, payload, (op & 8) != 0);
                if (!b.empty()) r.datagram(b, second);
                break;
            }
            case 2: {
                const std::size_t index = byte();
                const auto payload = take(byte());
                const auto b = r.short_header(index, payload);
                if (!b.empty()) r.datagram(b, second);
                break;
            }
            default:
                r.elapse(std::uint64_t{byte()} * 5'000'000);
                break;
        }
    }
    return 0;
}

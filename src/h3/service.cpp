// HTTP/3 on a worker's datagram socket: see service.hpp.

#include "h3/service.hpp"

#include "h3/connection.hpp"
#include "http/protocol_host.hpp"
#include "quic/server.hpp"

#include <tern/config.hpp>

#include <arpa/inet.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

namespace tern::detail {

namespace {

std::uint64_t now_ns() noexcept {
    return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                          std::chrono::steady_clock::now().time_since_epoch())
                                          .count());
}

quic::address address_of(const sockaddr* a, socklen_t length) noexcept {
    quic::address out;
    const auto n = std::min<std::size_t>(length, sizeof out.storage);
    std::memcpy(&out.storage, a, n);
    out.length = static_cast<socklen_t>(n);
    return out;
}

// The peer's IP as the access log and ctx.ip() show it (an IPv4-mapped IPv6 address as IPv4).
std::string ip_of(const quic::address& a) {
    char text[INET6_ADDRSTRLEN] = {};
    if (a.storage.ss_family == AF_INET) {
        const auto* in = reinterpret_cast<const sockaddr_in*>(&a.storage);
        ::inet_ntop(AF_INET, &in->sin_addr, text, sizeof text);
    } else if (a.storage.ss_family == AF_INET6) {
        const auto* in6 = reinterpret_cast<const sockaddr_in6*>(&a.storage);
        if (IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr)) {
            ::inet_ntop(AF_INET, in6->sin6_addr.s6_addr + 12, text, sizeof text);
        } else {
            ::inet_ntop(AF_INET6, &in6->sin6_addr, text, sizeof text);
        }
    }
    return text;
}

quic::connection_settings settings_of(const tern::config& cfg) {
    quic::connection_settings s;
    s.idle_timeout = cfg.timeouts.keep_alive;
    s.max_connections = cfg.limits.max_concurrent_connections;
    s.max_streams_bidi = cfg.http3.max_concurrent_streams;
    s.max_stream_data = cfg.http3.stream_window;
    s.max_data = cfg.http3.connection_window;
    s.max_handshakes = cfg.http3.max_handshakes;
    s.handshake_timeout = cfg.http3.handshake_timeout;
    return s;
}

class h3_service final : public datagram_receiver {
public:
    h3_service(datagram_sender& out, protocol_host& host, const tls_certificate& certificate,
               quic::placement where)
        : out_(out),
          host_(host),
          core_(
              certificate.cert_file, certificate.key_file, settings_of(host.settings()),
              [this](quic::stream_control& control, const quic::address& peer) {
                  return std::make_unique<h3_connection>(control, host_, ip_of(peer), connections_);
              },
              [this] {
                  // A response completed later (a held one, a streamed body's bytes): the
                  // timer fires at once and on_expiry writes it.
                  woken_ = true;
                  out_.expire_at(std::chrono::steady_clock::now());
              },
              std::move(where)) {}

    ~h3_service() override {
        // The connections still open are closed now, each told so (H3_NO_ERROR).
        core_.close_all(0x100, now_ns(), pending_);
        send();
    }

    void on_datagram(std::span<const std::uint8_t> bytes, const sockaddr* local,
                     socklen_t local_length, const sockaddr* remote,
                     socklen_t remote_length) override {
        const auto v = core_.receive(bytes, address_of(local, local_length),
                                     address_of(remote, remote_length), now_ns(), pending_);
        // A connection of another worker's, its peer now at an address the kernel hashes to
        // this socket: handed over untouched.
        if (v == quic::verdict::elsewhere) {
            out_.forward(core_.front().elsewhere(), bytes, remote, remote_length);
            return;
        }
        after();
    }

    void on_expiry() override {
        const auto now = now_ns();
        woken_ = false;
        core_.on_expiry(now, pending_);
        const auto clock_now = std::chrono::steady_clock::now();
        if (clock_now >= next_check_) {
            // The streams' deadlines, once a second (they are seconds long).
            next_check_ = clock_now + check_interval;
            const std::vector<h3_connection*> open(connections_.begin(), connections_.end());
            for (auto* c : open) {
                if (connections_.contains(c)) c->check(clock_now);
            }
        }
        core_.write_woken(now, pending_);
        after();
    }

    void on_closing() noexcept override {
        for (auto* c : connections_) c->on_closing();
        after();
    }

    void on_stop() noexcept override {
        // Copied: a stop may close connections.
        const std::vector<h3_connection*> open(connections_.begin(), connections_.end());
        for (auto* c : open) {
            if (connections_.contains(c)) c->stop();
        }
        after();
    }

    bool busy() const noexcept override {
        for (auto* c : connections_) {
            if (c->streams() != 0) return true;
        }
        return false;
    }

private:
    void send() {
        if (pending_.empty()) return;
        views_.clear();
        for (const auto& d : pending_) views_.push_back({d.bytes, d.to.get(), d.to.length});
        out_.send_many(views_);
        pending_.clear();
    }

    // Sends what the core made and sets the timer: now when a sink asked to send outside
    // a call into the core (a response completed later), else at the core's nearest expiry.
    void after() {
        send();
        if (woken_) {
            out_.expire_at(std::chrono::steady_clock::now());
            return;
        }
        auto when = std::chrono::steady_clock::time_point::max();
        if (const auto at = core_.expiry(); at != std::numeric_limits<std::uint64_t>::max()) {
            when = std::chrono::steady_clock::time_point(
                std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                    std::chrono::nanoseconds(at)));
        }
        // While any connection is open, its streams' deadlines are checked once a second
        // (each check walks the connections; a walk per datagram made every datagram's work
        // grow with their number).
        if (!connections_.empty()) {
            if (next_check_ == std::chrono::steady_clock::time_point{}) {
                next_check_ = std::chrono::steady_clock::now() + check_interval;
            }
            when = std::min(when, next_check_);
        }
        if (when != std::chrono::steady_clock::time_point::max()) out_.expire_at(when);
    }

    datagram_sender& out_;
    protocol_host& host_;
    std::unordered_set<h3_connection*> connections_;
    quic::datagram_batch pending_;
    std::vector<datagram_view> views_;
    bool woken_ = false;
    static constexpr std::chrono::seconds check_interval{1};
    std::chrono::steady_clock::time_point next_check_{};
    quic::server core_;  // last: its connections' sinks use the members above
};

}  // namespace

std::unique_ptr<datagram_receiver> open_datagrams(datagram_sender& out, protocol_host& host) {
    const auto& tls = host.settings().tls;
    if (!tls || tls->certificates.empty()) return nullptr;
    // One QUIC server per worker's socket; the first opened makes what they share (the
    // token secret, the connection count), before any of them runs.
    auto& shared = out.shared();
    if (!shared) shared = std::make_shared<quic::server_group>();
    quic::placement where{static_cast<std::uint8_t>(out.index()),
                          static_cast<std::uint8_t>(out.count()),
                          std::static_pointer_cast<quic::server_group>(shared)};
    return std::make_unique<h3_service>(out, host, tls->certificates.front(), std::move(where));
}

}  // namespace tern::detail

// The transport-free QUIC server core: see server.hpp.

#include "quic/server.hpp"

#include <ngtcp2/ngtcp2.h>

#include <algorithm>
#include <limits>
#include <utility>

// Last: GnuTLS's and ngtcp2's functions through the table that loads them on first use.
#include "quic/calls.hpp"

namespace tern::detail::quic {

namespace {

std::string key_of(std::span<const std::uint8_t> cid) {
    return {reinterpret_cast<const char*>(cid.data()), cid.size()};
}

std::shared_ptr<server_group> group_of(placement& where) {
    return where.group ? where.group : std::make_shared<server_group>();
}

endpoint_settings endpoint_of(const placement& where) {
    endpoint_settings s;
    s.node = where.node;
    s.nodes = where.nodes;
    return s;
}

}  // namespace

server::server(const std::string& cert_file, const std::string& key_file,
               connection_settings settings, sink_maker make_sink, std::function<void()> on_wake,
               placement where)
    : group_(group_of(where)),
      endpoint_(endpoint_of(where), &group_->secret),
      credentials_(cert_file, key_file),
      settings_(settings),
      make_sink_(std::move(make_sink)),
      on_wake_(std::move(on_wake)) {}

server::~server() {
    group_->connections.fetch_sub(held_.size(), std::memory_order_relaxed);
    group_->handshakes.fetch_sub(handshaking_, std::memory_order_relaxed);
}

verdict server::receive(std::span<const std::uint8_t> bytes, const address& local,
                        const address& remote, std::uint64_t now, datagram_batch& out) {
    ngtcp2_version_cid vc{};
    if (!bytes.empty() && ngtcp2_pkt_decode_version_cid(&vc, bytes.data(), bytes.size(),
                                                        endpoint_settings{}.cid_length) == 0) {
        const auto found =
            by_cid_.find(std::string_view(reinterpret_cast<const char*>(vc.dcid), vc.dcidlen));
        if (found != by_cid_.end()) {
            auto* c = found->second;
            after_io(c, c->receive(bytes, remote, now, out));
            return verdict::to_connection;
        }
    }
    const auto v = endpoint_.receive(bytes, local, remote, now, out);
    if (v != verdict::accepted) return v;
    // A place among the group's connections and among its handshakes, taken before the
    // connection is made (another node may be taking the last one at the same time) and
    // given back if there is none. Handshakes have a cap of their own: a client that sends
    // an Initial with a valid token and then nothing holds a connection's memory until the
    // handshake timeout (docs/http3.md, "Half-open connections").
    if (group_->connections.fetch_add(1, std::memory_order_relaxed) >= settings_.max_connections) {
        group_->connections.fetch_sub(1, std::memory_order_relaxed);
        return verdict::over_capacity;
    }
    if (group_->handshakes.fetch_add(1, std::memory_order_relaxed) >= settings_.max_handshakes) {
        group_->handshakes.fetch_sub(1, std::memory_order_relaxed);
        group_->connections.fetch_sub(1, std::memory_order_relaxed);
        return verdict::over_capacity;
    }
    auto on_cid = [this](connection& c, std::span<const std::uint8_t> cid, bool added) {
        auto& ids = held_[&c].cids;
        auto key = key_of(cid);
        if (added) {
            by_cid_[key] = &c;
            endpoint_.add_cid(cid);
            ids.push_back(std::move(key));
        } else {
            by_cid_.erase(key);
            endpoint_.remove_cid(cid);
            std::erase(ids, key);
        }
    };
    auto on_wake = [this](connection& c) {
        woken_.push_back(&c);
        if (woken_.size() == 1 && on_wake_) on_wake_();
    };
    std::unique_ptr<connection> c;
    try {
        c = std::make_unique<connection>(endpoint_, credentials_, local, remote, settings_, now,
                                         on_cid, on_wake);
    } catch (...) {
        // The IDs it issued before it failed name no connection.
        for (auto it = held_.begin(); it != held_.end();) {
            if (it->second.owned) {
                ++it;
                continue;
            }
            for (const auto& key : it->second.cids) forget_cid(key);
            it = held_.erase(it);
        }
        group_->handshakes.fetch_sub(1, std::memory_order_relaxed);
        group_->connections.fetch_sub(1, std::memory_order_relaxed);
        throw;
    }
    auto* raw = c.get();
    if (make_sink_) raw->set_sink_maker(make_sink_);
    held_[raw].owned = std::move(c);
    ++handshaking_;
    after_io(raw, raw->receive(bytes, remote, now, out));
    return v;
}

void server::forget_cid(const std::string& key) {
    by_cid_.erase(key);
    endpoint_.remove_cid({reinterpret_cast<const std::uint8_t*>(key.data()), key.size()});
}

void server::schedule(connection* c, held& h) {
    const auto at = c->expiry();
    if (at == h.expiry) return;  // unchanged: the set stays as it is
    const auto old = std::exchange(h.expiry, at);
    if (old != never && at != never) {
        // The same node moved to its new place: no allocation per datagram.
        auto node = by_expiry_.extract({old, c});
        node.value().first = at;
        by_expiry_.insert(std::move(node));
        return;
    }
    if (old != never) by_expiry_.erase({old, c});
    if (at != never) by_expiry_.emplace(at, c);
}

void server::after_io(connection* c, bool alive) {
    if (!alive) {
        end(c);
        return;
    }
    if (c->handshake_completed() && !c->announced()) {
        c->announce();
        ++handshakes_;
        --handshaking_;
        group_->handshakes.fetch_sub(1, std::memory_order_relaxed);
    }
    schedule(c, held_.at(c));
}

void server::write_woken(std::uint64_t now, datagram_batch& out) {
    auto woken = std::exchange(woken_, {});
    for (auto* c : woken) {
        if (held_.contains(c)) after_io(c, c->write(now, out));
    }
}

void server::close_all(std::uint64_t code, std::uint64_t now, datagram_batch& out) {
    while (!held_.empty()) {
        auto* c = held_.begin()->first;
        c->close(code, now, out);
        end(c);
    }
}

void server::end(connection* c) {
    const auto found = held_.find(c);
    if (found == held_.end()) return;
    std::erase(woken_, c);
    auto& h = found->second;
    // Its own IDs, not a walk over every connection's (docs/http3.md, "Half-open connections").
    for (const auto& key : h.cids) forget_cid(key);
    if (h.expiry != never) by_expiry_.erase({h.expiry, c});
    if (!c->announced()) {
        --handshaking_;
        group_->handshakes.fetch_sub(1, std::memory_order_relaxed);
    }
    held_.erase(found);
    group_->connections.fetch_sub(1, std::memory_order_relaxed);
}

std::uint64_t server::expiry() const noexcept {
    return by_expiry_.empty() ? never : by_expiry_.begin()->first;
}

void server::on_expiry(std::uint64_t now, datagram_batch& out) {
    // The connections due, in expiry order; each is scheduled again (or ended) as it is
    // handled, so the set is read before any is.
    due_.clear();
    for (auto it = by_expiry_.begin(); it != by_expiry_.end() && it->first <= now; ++it) {
        due_.push_back(it->second);
    }
    for (auto* c : due_) {
        if (held_.contains(c)) after_io(c, c->on_expiry(now, out));
    }
}

}  // namespace tern::detail::quic

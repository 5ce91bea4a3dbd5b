#include "client/pool.hpp"

#include "platform/socket_api.hpp"

#include <algorithm>
#include <cstring>
#include <utility>

namespace tern::detail {

namespace {

constexpr auto name_lifetime = std::chrono::minutes(1);

}  // namespace

std::unique_ptr<upstream> client_shared::take(const origin& where) {
    std::vector<std::unique_ptr<upstream>> stale;  // closed outside the lock
    std::unique_ptr<upstream> found;
    {
        const auto now = upstream::clock::now();
        std::lock_guard lock(mutex_);
        const auto it = idle_.find(where.key());
        if (it == idle_.end()) return nullptr;
        auto& list = it->second;
        // The most recently used first: it is the likeliest still open on the server's side.
        while (!list.empty()) {
            auto c = std::move(list.back());
            list.pop_back();
            if (now - c->idle_since < options.idle_timeout && c->fit_for_reuse()) {
                found = std::move(c);
                break;
            }
            stale.push_back(std::move(c));
        }
        if (list.empty()) idle_.erase(it);
    }
    return found;
}

void client_shared::give_back(std::unique_ptr<upstream> c) {
    if (options.max_idle_per_origin == 0) return;
    c->idle_since = upstream::clock::now();
    std::unique_ptr<upstream> oldest;
    std::lock_guard lock(mutex_);
    auto& list = idle_[c->where().key()];
    if (list.size() >= options.max_idle_per_origin) {
        oldest = std::move(list.front());
        list.erase(list.begin());
    }
    list.push_back(std::move(c));
}

std::size_t client_shared::idle_count() {
    std::lock_guard lock(mutex_);
    std::size_t n = 0;
    for (const auto& [key, list] : idle_) n += list.size();
    return n;
}

std::vector<resolved_address> client_shared::resolve(const std::string& host, std::uint16_t port,
                                                     std::string& error) {
    const std::string key = host + ":" + std::to_string(port);
    const auto now = std::chrono::steady_clock::now();
    {
        std::lock_guard lock(mutex_);
        if (const auto it = names_.find(key); it != names_.end() && it->second.until > now) {
            return it->second.addresses;
        }
    }
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    // No AI_ADDRCONFIG: on a machine with loopback alone it refuses "127.0.0.1" itself; an
    // address family the machine cannot reach fails its connect and the next one is tried.
    hints.ai_flags = AI_NUMERICSERV;
    addrinfo* found = nullptr;
    const std::string service = std::to_string(port);
    const int rc = ::getaddrinfo(host.c_str(), service.c_str(), &hints, &found);
    if (rc != 0) {
        error = "cannot resolve " + host + ": " + ::gai_strerror(rc);
        return {};
    }
    std::vector<resolved_address> addresses;
    for (const addrinfo* a = found; a != nullptr; a = a->ai_next) {
        if (a->ai_addrlen > sizeof(sockaddr_storage)) continue;
        resolved_address r;
        std::memcpy(&r.address, a->ai_addr, a->ai_addrlen);
        r.length = static_cast<unsigned>(a->ai_addrlen);
        addresses.push_back(r);
    }
    ::freeaddrinfo(found);
    if (addresses.empty()) {
        error = "cannot resolve " + host + ": no address";
        return {};
    }
    std::lock_guard lock(mutex_);
    names_[key] = {addresses, now + name_lifetime};
    return addresses;
}

std::shared_ptr<const tls_client_context> client_shared::tls() {
    std::lock_guard lock(mutex_);
    if (!tls_) tls_ = tls_client_context::build(options.verify_peer, options.ca_file);
    return tls_;
}

}  // namespace tern::detail

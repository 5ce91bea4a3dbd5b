#pragma once
// What the copies of one tern::client share: its settings, the idle connections kept per
// origin, the names it has resolved, and the TLS context (made on the first https call).
// Any thread: one mutex, held only to take or give back a connection or a name.

#include "client/upstream.hpp"

#include <tern/client.hpp>

#include <chrono>
#include <cstddef>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "platform/socket_api.hpp"

namespace tern::detail {

/// One address a name resolved to.
struct resolved_address {
    sockaddr_storage address{};
    unsigned length = 0;
};

struct client_shared {
    explicit client_shared(client_options o) : options(std::move(o)) {}

    /// An idle connection to `where` that is still fit for use, or null. Drops the ones
    /// that have been idle too long or that the server has closed.
    std::unique_ptr<upstream> take(const origin& where);
    /// Keeps `c` for the next call to its origin (up to max_idle_per_origin; the oldest
    /// goes first beyond that).
    void give_back(std::unique_ptr<upstream> c);
    std::size_t idle_count();

    /// `host`'s addresses (numeric ones without a lookup; names through getaddrinfo(3) on
    /// this thread, kept for a minute). Empty, with `error` set, when it has none.
    std::vector<resolved_address> resolve(const std::string& host, std::uint16_t port,
                                          std::string& error);

    /// The TLS context of its https connections (made once; throws when the CA file cannot
    /// be loaded).
    std::shared_ptr<const tls_client_context> tls();

    const client_options options;

private:
    struct cached_name {
        std::vector<resolved_address> addresses;
        std::chrono::steady_clock::time_point until;
    };
    std::mutex mutex_;
    std::unordered_map<std::string, std::vector<std::unique_ptr<upstream>>> idle_;
    std::unordered_map<std::string, cached_name> names_;
    std::shared_ptr<const tls_client_context> tls_;
};

}  // namespace tern::detail

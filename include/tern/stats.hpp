#pragma once
/// @file stats.hpp
/// Counters a running server keeps, for monitoring and for tests.

#include <cstddef>
#include <cstdint>

namespace tern {

/// A snapshot of a server's counters since `start()`, summed over its threads. Each thread
/// counts its own (no shared counter on the request path), so a snapshot taken under load
/// may be a few events behind.
struct server_stats {
    std::uint64_t connections_accepted = 0;  ///< accepted, including those refused below
    std::uint64_t connections_refused = 0;   ///< answered 503 (over max_concurrent_connections)
    std::uint64_t requests = 0;              ///< requests answered, including error answers
    std::uint64_t writes = 0;  ///< socket writes; responses to requests read together share one
    std::size_t open_connections = 0;  ///< connections open now
};

}  // namespace tern

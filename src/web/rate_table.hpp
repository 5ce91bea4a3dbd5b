#pragma once
// Token buckets for rate limiting (tern::rate_limit, docs/rate-limits.md), one per key, in a
// table of fixed size: whatever the number of distinct keys a client can make up, the table
// holds `capacity` buckets and allocates nothing after it is made. Transport-free and
// single-threaded: each event loop keeps a table of its own, so no lock is shared on the
// request path.
//
// The table is set-associative: a key's hash picks a set of `ways` buckets; a key not in its
// set takes the set's least recently used bucket, starting full. So under pressure from
// many keys a key may be forgotten, which only ever lets it through sooner: a flood of
// made-up keys can never make another key's bucket emptier. Keys of up to `key_bytes`
// bytes are kept whole and compared exactly; a longer key is kept as a 64-bit hash of it.

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace tern::detail {

class rate_table {
public:
    using clock = std::chrono::steady_clock;

    /// Buckets of a set; keys compete for a bucket only within their set.
    static constexpr std::size_t ways = 4;
    /// Bytes of a key kept whole (an IPv6 address in text is at most 45).
    static constexpr std::size_t key_bytes = 64;

    /// What one request was allowed.
    struct decision {
        bool allowed = false;
        /// Whole requests left in the bucket after this one.
        std::uint64_t remaining = 0;
        /// When allowed is false: how long until one request is allowed.
        clock::duration retry_after{};
        /// How long until the bucket is full again.
        clock::duration reset{};
    };

    /// `capacity` buckets (rounded up to whole sets, at least one), each holding up to
    /// `burst` requests (at least 1) and refilled with `requests` per `per`.
    rate_table(std::size_t capacity, std::uint64_t requests, clock::duration per,
               std::uint64_t burst);

    /// Takes one request from `key`'s bucket at `now`.
    decision take(std::string_view key, clock::time_point now) noexcept;

    /// Buckets in the table (fixed when it was made).
    std::size_t capacity() const noexcept { return slots_.size(); }
    /// Buckets holding a key now.
    std::size_t used() const noexcept;

private:
    struct slot {
        std::array<char, key_bytes> key{};
        std::uint8_t length = 0;  // bytes of key; hashed: 0xff
        bool used = false;
        std::uint64_t hash = 0;
        double tokens = 0;         // requests left, fractions included
        clock::time_point last{};  // when tokens were last brought up to date
    };

    bool holds(const slot& s, std::string_view key, std::uint64_t hash) const noexcept;

    std::vector<slot> slots_;
    std::size_t sets_ = 1;
    double burst_ = 1;
    double per_token_ns_ = 1;  // nanoseconds to earn one request back
    std::uint64_t seed_;       // mixed into the set choice, per table
};

}  // namespace tern::detail

#pragma once
// FNV-1a, 64 bits: the digest that the tests of request bodies read as they arrive compute on
// both sides as the bytes pass (tests/integration/test_streamed_bodies.cpp and its HTTP/2,
// HTTP/3, multipart and test-kit neighbours), and what their handlers saw.

#include <atomic>
#include <cstdint>
#include <string_view>

namespace tern_test {

inline constexpr std::uint64_t fnv_offset = 14695981039346656037ull;

/// FNV-1a of `s`, carried on from `h` (a digest of earlier bytes, or the offset basis).
inline std::uint64_t fnv(std::string_view s, std::uint64_t h = fnv_offset) noexcept {
    for (const char c : s) {
        h ^= static_cast<unsigned char>(c);
        h *= 1099511628211ull;
    }
    return h;
}

/// The same digest, kept as pieces pass.
struct fnv_digest {
    std::uint64_t h = fnv_offset;
    void update(std::string_view s) noexcept { h = fnv(s, h); }
};

/// What a streamed-body test's handlers saw, for the test to check.
struct body_seen {
    std::atomic<std::uint64_t> bytes{0};
    std::atomic<int> pieces{0};
    std::atomic<int> failure{0};  // a tern::body_failure's value, 0: none
    std::atomic<bool> asked{false};
    std::atomic<bool> release{false};
    std::atomic<int> finished{0};
};

}  // namespace tern_test

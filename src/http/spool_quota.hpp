#pragma once
// The disk space all spooled request bodies of one server may hold at once
// (config::max_spooled_bytes): taken as a body's bytes arrive (or, when the request declares
// its length, before the first byte) and given back when the body's file closes, so an
// upload flood is answered 503 before the spool's file system fills.

#include <atomic>
#include <cstdint>
#include <memory>

namespace tern::detail {

class spool_quota : public std::enable_shared_from_this<spool_quota> {
public:
    /// `limit` bytes in all (0: no bound).
    explicit spool_quota(std::uint64_t limit) noexcept : limit_(limit) {}

    /// Takes `n` bytes; false, taking nothing, when that would pass the limit. Any thread.
    bool take(std::uint64_t n) noexcept;
    /// Gives back `n` bytes taken before. Any thread.
    void give(std::uint64_t n) noexcept { used_.fetch_sub(n, std::memory_order_relaxed); }

private:
    std::uint64_t limit_;
    std::atomic<std::uint64_t> used_{0};
};

}  // namespace tern::detail

#include "http/spool_quota.hpp"

namespace tern::detail {

bool spool_quota::take(std::uint64_t n) noexcept {
    std::uint64_t now = used_.load(std::memory_order_relaxed);
    do {
        if (limit_ != 0 && (now > limit_ || n > limit_ - now)) return false;
    } while (!used_.compare_exchange_weak(now, now + n, std::memory_order_relaxed));
    return true;
}

}  // namespace tern::detail

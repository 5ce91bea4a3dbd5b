#pragma once
// A token bucket: what a client may do for free and the server must work for, counted at a
// rate with a burst (HTTP/2's flood_guard, HTTP/3's rapid-reset budget: docs/http2.md,
// docs/http3.md). Transport-free: time is passed in.

#include <algorithm>
#include <chrono>
#include <cstdint>

namespace tern::detail {

/// `burst` tokens at once, refilled at `per_second`.
class token_bucket {
public:
    using clock = std::chrono::steady_clock;

    token_bucket(std::uint32_t burst, std::uint32_t per_second) noexcept
        : burst_(burst), per_second_(per_second), tokens_(burst) {}

    /// One token at `now`: false when the bucket is empty (the client floods).
    bool take(clock::time_point now) noexcept {
        if (last_ != clock::time_point{}) {
            const std::chrono::duration<double> passed = now - last_;
            tokens_ = std::min<double>(burst_, tokens_ + passed.count() * per_second_);
        }
        last_ = now;
        if (tokens_ < 1.0) return false;
        tokens_ -= 1.0;
        return true;
    }

private:
    std::uint32_t burst_;
    std::uint32_t per_second_;
    double tokens_;
    clock::time_point last_{};
};

}  // namespace tern::detail

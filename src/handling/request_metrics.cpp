#include "handling/request_metrics.hpp"

#include <algorithm>

namespace tern::detail {

namespace {

std::size_t method_slot(std::string_view method) noexcept {
    const auto* it = std::find(metered_methods.begin(), metered_methods.end(), method);
    return static_cast<std::size_t>(it - metered_methods.begin());  // size(): "other"
}

}  // namespace

void request_metrics::record(std::string_view method, int status,
                             std::chrono::nanoseconds took) noexcept {
    const int cls = std::clamp(status / 100, 1, static_cast<int>(status_slots));
    bump(requests_[method_slot(method)][static_cast<std::size_t>(cls - 1)]);
    const std::int64_t ns = std::max<std::int64_t>(took.count(), 0);
    std::size_t bucket = 0;
    while (bucket < latency_bounds_ns.size() && ns > latency_bounds_ns[bucket]) ++bucket;
    bump(buckets_[bucket]);
    bump(duration_ns_, static_cast<std::uint64_t>(ns));
}

void request_metrics::add_to(request_totals& into) const noexcept {
    // The ends first (acquire): every begin before them is seen, so in flight never goes
    // below zero.
    into.ended += ended_.load(std::memory_order_acquire) + dropped_.load(std::memory_order_acquire);
    into.begun += begun_.load(std::memory_order_relaxed);
    for (std::size_t m = 0; m < method_slots; ++m) {
        for (std::size_t s = 0; s < status_slots; ++s) {
            into.requests[m][s] += requests_[m][s].load(std::memory_order_relaxed);
        }
    }
    for (std::size_t b = 0; b < buckets_.size(); ++b) {
        into.buckets[b] += buckets_[b].load(std::memory_order_relaxed);
    }
    into.duration_ns += duration_ns_.load(std::memory_order_relaxed);
}

}  // namespace tern::detail

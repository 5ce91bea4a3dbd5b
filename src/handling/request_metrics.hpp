#pragma once
// One event loop's request counters for the Prometheus endpoint (app.metrics): requests by
// method and status class, the latency histogram, requests in flight. Written by the loop's
// own thread with a relaxed load and store (a plain increment, no locked instruction), read
// by a scrape on any thread, the way the worker's own counters are (src/net/worker.hpp).

#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>

namespace tern::detail {

/// The methods counted by name; any other is counted as "other" (index methods.size()), so
/// a client cannot grow the label set.
inline constexpr std::array<std::string_view, 9> metered_methods = {
    "GET", "HEAD", "POST", "PUT", "DELETE", "CONNECT", "OPTIONS", "TRACE", "PATCH"};
inline constexpr std::size_t method_slots = metered_methods.size() + 1;
/// Status classes 1xx..9xx (index class - 1).
inline constexpr std::size_t status_slots = 9;
/// The histogram's upper bounds in seconds, as written in `le` labels; +Inf follows.
inline constexpr std::array<std::string_view, 13> latency_bounds = {
    "0.001", "0.0025", "0.005", "0.01", "0.025", "0.05", "0.1",
    "0.25",  "0.5",    "1",     "2.5",  "5",     "10"};
/// The same bounds in nanoseconds.
inline constexpr std::array<std::int64_t, 13> latency_bounds_ns = {
    1'000'000,     2'500'000,     5'000'000,     10'000'000,  25'000'000,
    50'000'000,    100'000'000,   250'000'000,   500'000'000, 1'000'000'000,
    2'500'000'000, 5'000'000'000, 10'000'000'000};

/// The counters of every loop, summed (a scrape's snapshot).
struct request_totals {
    std::array<std::array<std::uint64_t, status_slots>, method_slots> requests{};
    /// Not cumulative: requests whose duration fell in each bucket; the last is over 10 s.
    std::array<std::uint64_t, latency_bounds.size() + 1> buckets{};
    std::uint64_t duration_ns = 0;  ///< the sum of the durations
    std::uint64_t begun = 0;        ///< requests that entered the chain
    std::uint64_t ended = 0;        ///< of those, the ones whose chain ended or was dropped
};

/// One loop's counters. `begin`, `end` and `record` on the loop's thread only; `drop` from
/// any thread (the rare request that ends without its chain); `add_to` from any thread.
class request_metrics : public std::enable_shared_from_this<request_metrics> {
public:
    /// A request entered the handler chain.
    void begin() noexcept { bump(begun_); }
    /// Its chain ended (after `record`).
    void end() noexcept {
        // Release: a scrape that sees this end sees the begin before it too.
        ended_.store(ended_.load(std::memory_order_relaxed) + 1, std::memory_order_release);
    }
    /// A request that began will never end (its client left while a blocking handler ran,
    /// or while it was held): counted apart, from whichever thread lets it go.
    void drop() noexcept { dropped_.fetch_add(1, std::memory_order_release); }
    /// A final response: `method` as sent, `status`, the time its chain took.
    void record(std::string_view method, int status, std::chrono::nanoseconds took) noexcept;
    /// Adds these counters to `into` (any thread).
    void add_to(request_totals& into) const noexcept;

private:
    static void bump(std::atomic<std::uint64_t>& c, std::uint64_t by = 1) noexcept {
        c.store(c.load(std::memory_order_relaxed) + by, std::memory_order_relaxed);
    }

    std::array<std::array<std::atomic<std::uint64_t>, status_slots>, method_slots> requests_{};
    std::array<std::atomic<std::uint64_t>, latency_bounds.size() + 1> buckets_{};
    std::atomic<std::uint64_t> duration_ns_{0};
    std::atomic<std::uint64_t> begun_{0};
    std::atomic<std::uint64_t> ended_{0};
    std::atomic<std::uint64_t> dropped_{0};
};

/// A request whose chain continues away from the common path (a blocking handler, a held
/// response): when it is let go of before `ended()`, on whatever thread, the request is
/// counted as dropped, so it does not stay in flight for ever. Keeps its metrics alive.
class in_flight_mark {
public:
    in_flight_mark() = default;
    /// Marks a request of `metrics` (null: metrics off, nothing to do).
    explicit in_flight_mark(request_metrics* metrics)
        : metrics_(metrics != nullptr ? metrics->weak_from_this().lock() : nullptr) {}
    in_flight_mark(const in_flight_mark&) = delete;
    in_flight_mark& operator=(const in_flight_mark&) = delete;
    ~in_flight_mark() {
        if (metrics_) metrics_->drop();
    }
    /// The chain ended (the metrics counted it): nothing to do at destruction.
    void ended() noexcept { metrics_.reset(); }
    /// The request will never end (its client left): counted as dropped now.
    void dropped() noexcept {
        if (metrics_) metrics_->drop();
        metrics_.reset();
    }

private:
    std::shared_ptr<request_metrics> metrics_;
};

}  // namespace tern::detail

#pragma once
// The Prometheus text exposition (format 0.0.4) of a server's counters: what app.metrics
// serves (docs/metrics.md).

#include "handling/request_metrics.hpp"

#include <tern/stats.hpp>

#include <cstddef>
#include <string>
#include <string_view>

namespace tern::detail {

/// The Content-Type of the exposition.
inline constexpr std::string_view metrics_content_type = "text/plain; version=0.0.4; charset=utf-8";

/// Everything a scrape reports, summed over the event loops.
struct metrics_snapshot {
    server_stats server;
    request_totals requests;
    std::size_t blocking_queue = 0;  ///< jobs waiting for a blocking-pool thread now
};

/// The exposition of `s`, with HELP and TYPE lines for every metric.
std::string prometheus_text(const metrics_snapshot& s);

}  // namespace tern::detail

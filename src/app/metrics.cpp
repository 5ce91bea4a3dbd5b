#include "app/metrics.hpp"

#include <tern/version.hpp>

#include <fmt/format.h>

#include <iterator>

namespace tern::detail {

namespace {

void head(std::string& out, std::string_view name, std::string_view type, std::string_view help) {
    fmt::format_to(std::back_inserter(out), "# HELP {} {}\n# TYPE {} {}\n", name, help, name, type);
}

void single(std::string& out, std::string_view name, std::string_view type, std::string_view help,
            std::uint64_t value) {
    head(out, name, type, help);
    fmt::format_to(std::back_inserter(out), "{} {}\n", name, value);
}

}  // namespace

std::string prometheus_text(const metrics_snapshot& s) {
    std::string out;
    out.reserve(4096);
    const auto& r = s.requests;
    auto it = std::back_inserter(out);

    head(out, "tern_requests_total", "counter",
         "Requests answered, by method (others as \"other\") and status class.");
    for (std::size_t m = 0; m < method_slots; ++m) {
        const std::string_view method = m < metered_methods.size() ? metered_methods[m] : "other";
        for (std::size_t c = 0; c < status_slots; ++c) {
            if (r.requests[m][c] == 0) continue;
            fmt::format_to(it, "tern_requests_total{{method=\"{}\",status=\"{}xx\"}} {}\n", method,
                           c + 1, r.requests[m][c]);
        }
    }

    head(out, "tern_request_duration_seconds", "histogram",
         "Time from the complete request to the final response (handler chain, error "
         "shaping, compression), before it is written.");
    std::uint64_t cumulative = 0;
    for (std::size_t b = 0; b < latency_bounds.size(); ++b) {
        cumulative += r.buckets[b];
        fmt::format_to(it, "tern_request_duration_seconds_bucket{{le=\"{}\"}} {}\n",
                       latency_bounds[b], cumulative);
    }
    cumulative += r.buckets.back();
    fmt::format_to(it, "tern_request_duration_seconds_bucket{{le=\"+Inf\"}} {}\n", cumulative);
    fmt::format_to(it, "tern_request_duration_seconds_sum {}\n",
                   static_cast<double>(r.duration_ns) / 1e9);
    fmt::format_to(it, "tern_request_duration_seconds_count {}\n", cumulative);

    single(out, "tern_requests_in_flight", "gauge",
           "Requests in the handler chain now (running, held or waiting for a blocking thread).",
           r.begun > r.ended ? r.begun - r.ended : 0);
    single(out, "tern_connections_open", "gauge", "Connections open now.",
           s.server.open_connections);
    single(out, "tern_connections_accepted_total", "counter",
           "Connections accepted, including those refused.", s.server.connections_accepted);
    single(out, "tern_connections_refused_total", "counter",
           "Connections refused over max_concurrent_connections or max_handshakes.",
           s.server.connections_refused);
    single(out, "tern_bytes_received_total", "counter",
           "Bytes read from connections (after TLS decryption).", s.server.bytes_received);
    single(out, "tern_bytes_sent_total", "counter",
           "Bytes written to connections (before TLS encryption).", s.server.bytes_sent);
    single(out, "tern_blocking_queue_length", "gauge",
           "Requests waiting for a blocking-pool thread now.", s.blocking_queue);
    head(out, "tern_build_info", "gauge", "The tern library's version.");
    fmt::format_to(it, "tern_build_info{{version=\"{}\"}} 1\n", tern::version());
    return out;
}

}  // namespace tern::detail

#pragma once
// What one multiplexed connection (HTTP/2, HTTP/3) may hold, whatever its stream limit
// (docs/http2.md and docs/http3.md, "What one connection may hold"): the HTTP/1.1 pipelining
// rule carried over to streams. A complete request's handler runs only while the connection
// holds less than `max_held` response bytes in memory and fewer than `max_open_files` open
// files; the other complete requests wait, in order, and run as the client takes what is
// held. A connection that holds nothing always runs its next stream, so the bounds never stop
// a connection altogether (and one answer larger than the budget is still served). Near the
// process's descriptor limit a waiting stream is refused instead, as not processed (the
// client may retry it). Spooled request bodies beside another one are bounded by
// `max_spooled`.
//
// A protocol's stream provides `held_bytes()` (response bytes it holds in memory),
// `holds_file()` (a file body or a spooled request body open), `spooled_bytes()`, `closed()`
// and `run()`; its connection keeps its streams in a map of ID to shared_ptr.

#include "http/protocol_host.hpp"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace tern::detail {

struct stream_budget {
    std::uint64_t max_held = 0;
    std::size_t max_open_files = 0;
    std::uint64_t max_spooled = 0;
};

/// The open files of a connection's streams.
template <class Streams>
std::size_t open_files(const Streams& streams) {
    std::size_t files = 0;
    for (const auto& [id, stream] : streams) {
        if (stream->holds_file()) ++files;
    }
    return files;
}

/// Runs the `waiting` streams, in order, while the connection's `streams` hold less than the
/// budget; those left keep waiting. `refuse(stream)` answers one the process has no
/// descriptor for. Streams closed while they waited are dropped wherever they are in the
/// queue, so that opening and resetting streams behind one that waits holds nothing.
template <class Stream, class Streams, class Refuse>
void admit_streams(std::vector<std::shared_ptr<Stream>>& waiting, const Streams& streams,
                   const stream_budget& budget, protocol_host& host, Refuse refuse) {
    std::erase_if(waiting, [](const auto& stream) { return stream->closed(); });
    if (waiting.empty()) return;
    std::uint64_t held = 0;
    std::size_t files = 0;
    for (const auto& [id, stream] : streams) {
        held += stream->held_bytes();
        if (stream->holds_file()) ++files;
    }
    // A waiting stream's own file (its spooled request body) is open already and stays open
    // whether its handler runs or not: counted against the others, h2_max_open_files
    // spooled uploads would hold every one of their handlers back for ever.
    for (const auto& stream : waiting) {
        if (stream->holds_file() && files != 0) --files;
    }
    std::size_t taken = 0;
    for (; taken < waiting.size(); ++taken) {
        auto& stream = waiting[taken];
        const bool holds = held != 0 || files != 0;
        if (holds && (held >= budget.max_held || files >= budget.max_open_files)) break;
        if (host.short_of_descriptors()) {
            refuse(*stream);
            continue;
        }
        stream->run();
        held += stream->held_bytes();
        if (stream->holds_file()) ++files;
    }
    waiting.erase(waiting.begin(), waiting.begin() + static_cast<std::ptrdiff_t>(taken));
}

/// Whether `stream` may hold `bytes` of spooled request body beside the other streams'. The
/// connection's only spooled body is bounded by its body limit alone, as over HTTP/1.1
/// (where a connection spools one body at a time); beside others, all of them by
/// `budget.max_spooled`.
template <class Stream, class Streams>
bool may_spool_beside(const Streams& streams, const Stream& stream, std::uint64_t bytes,
                      const stream_budget& budget) {
    std::uint64_t others = 0;
    for (const auto& [id, each] : streams) {
        if (each.get() != &stream) others += each->spooled_bytes();
    }
    return others == 0 || others + bytes <= budget.max_spooled;
}

}  // namespace tern::detail

// What one HTTP/2 connection may hold, whatever h2_max_concurrent_streams allows
// (docs/http2.md, "What one connection may hold"): the HTTP/1.1 pipelining rule carried over
// to streams. A complete request's handler runs only while the connection holds less than
// h2_max_unsent response bytes in memory and fewer than h2_max_open_files open files; the
// other complete requests wait, in order, and run as the client takes what is held. A
// client that grants no window therefore holds at most the budget (plus the one answer that
// passed it) and h2_max_open_files descriptors, and then it waits, not the server. Near the
// process's descriptor limit a new stream is refused (REFUSED_STREAM: safe to retry).
// And the connection's window is held to a minimum rate, as each stream's is
// (h2_stream::check). Request bodies in memory are held to http2.max_body_memory: past it,
// their streams' windows come back as bodies are let go (http/body_memory.hpp).

#include "h2/connection_impl.hpp"
#include "h2/stream.hpp"
#include "http/stream_budget.hpp"

#include <tern/config.hpp>

#include <nghttp2/nghttp2.h>

#include <cstdint>
#include <vector>

// Last: nghttp2's functions through the table that loads it on first use.
#include "h2/calls.hpp"

namespace tern::detail {

namespace {

stream_budget h2_budget(const config& cfg) {
    return {cfg.http2.max_unsent, cfg.http2.max_open_files, cfg.http2.max_spooled_bytes};
}

}  // namespace

void h2_connection::admit() {
    if (broken_ || ended_) {
        std::erase_if(waiting_, [](const auto& stream) { return stream->closed(); });
        return;
    }
    admit_streams(waiting_, streams_, h2_budget(host_.settings()), host_, [&](h2_stream& s) {
        nghttp2_submit_rst_stream(session_, NGHTTP2_FLAG_NONE, s.id(), NGHTTP2_REFUSED_STREAM);
    });
}

bool h2_connection::may_open_file() {
    return open_files(streams_) < host_.settings().http2.max_open_files &&
           !host_.short_of_descriptors();
}

bool h2_connection::may_spool(const h2_stream& stream, std::uint64_t bytes) const {
    return may_spool_beside(streams_, stream, bytes, h2_budget(host_.settings()));
}

bool h2_connection::may_take_more(const h2_stream& stream) {
    return owed_.may_take_more(stream, streams_, host_.settings().http2.max_body_memory);
}

bool h2_connection::settle_bodies() {
    if (broken_ || ended_) return false;
    return owed_.settle(streams_, host_.settings().http2.max_body_memory);
}

bool h2_connection::pull_frames(std::string& out, std::size_t max) {
    while (out.size() < max) {
        const std::uint8_t* data = nullptr;
        const auto n = nghttp2_session_mem_send(session_, &data);
        if (n < 0) {
            broken_ = true;
            return false;
        }
        if (n == 0) return true;
        out.append(reinterpret_cast<const char*>(data), static_cast<std::size_t>(n));
    }
    return false;  // full: the next pull goes on
}

void h2_connection::check_send_rate(clock::time_point now) {
    if (broken_ || ended_) return;
    // Some stream has bytes to send and only the connection's window holds it back: the
    // connection must send http2.min_send_progress bytes of DATA within timeouts.write (or be
    // granted that much window), else it ends. A stream whose own window is shut is reset
    // by its own check, which ran first.
    const auto& cfg = host_.settings();
    bool waits = false;
    for (const auto& [id, stream] : streams_) waits = waits || stream->wants_window();
    const auto window = nghttp2_session_get_remote_window_size(session_);
    if (!waits || window >= static_cast<std::int64_t>(cfg.http2.min_send_progress)) {
        window_stalled_since_ = clock::time_point{};
    } else if (window_stalled_since_ == clock::time_point{} ||
               data_sent_ - window_stalled_sent_ >= cfg.http2.min_send_progress) {
        window_stalled_since_ = now;
        window_stalled_sent_ = data_sent_;
    } else if (now >= window_stalled_since_ + cfg.timeouts.write && !going_away_) {
        nghttp2_session_terminate_session(session_, NGHTTP2_ENHANCE_YOUR_CALM);
        going_away_ = true;
    }
}

h2_connection::clock::time_point h2_connection::send_rate_deadline() const noexcept {
    if (window_stalled_since_ == clock::time_point{} || going_away_) {
        return clock::time_point::max();
    }
    return window_stalled_since_ + host_.settings().timeouts.write;
}

}  // namespace tern::detail

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

#include <cstdint>
#include <vector>

namespace tern::detail {

namespace {

stream_budget h2_budget(const config& cfg) {
    return {cfg.http2.max_unsent, cfg.http2.max_open_files, cfg.http2.max_spooled_bytes};
}

}  // namespace

void h2_connection::admit() {
    if (broken_ || ended_ || failed_) {
        std::erase_if(waiting_, [](const auto& stream) { return stream->closed(); });
        return;
    }
    admit_streams(waiting_, streams_, h2_budget(host_.settings()), host_,
                  [&](h2_stream& s) { stream_error(s.id(), error_code::refused_stream); });
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
    if (broken_ || ended_ || failed_) return false;
    return owed_.settle(streams_, host_.settings().http2.max_body_memory);
}

void h2_connection::check_send_rate(clock::time_point now) {
    if (broken_ || ended_ || failed_) return;
    // Some stream has bytes to send and only the connection's window holds it back: the
    // connection must send http2.min_send_progress bytes of DATA within timeouts.write (or be
    // granted that much window), else it ends. A stream whose own window is shut is reset
    // by its own check, which ran first.
    const auto& cfg = host_.settings();
    bool waits = false;
    for (const auto& [id, stream] : streams_) waits = waits || stream->wants_window();
    const auto window = send_window_;
    if (!waits || window >= static_cast<std::int64_t>(cfg.http2.min_send_progress)) {
        window_stalled_since_ = clock::time_point{};
    } else if (window_stalled_since_ == clock::time_point{} ||
               data_sent_ - window_stalled_sent_ >= cfg.http2.min_send_progress) {
        window_stalled_since_ = now;
        window_stalled_sent_ = data_sent_;
    } else if (now >= window_stalled_since_ + cfg.timeouts.write && !going_away_) {
        calm_down();
    }
}

h2_connection::clock::time_point h2_connection::send_rate_deadline() const noexcept {
    if (window_stalled_since_ == clock::time_point{} || going_away_) {
        return clock::time_point::max();
    }
    return window_stalled_since_ + host_.settings().timeouts.write;
}

}  // namespace tern::detail

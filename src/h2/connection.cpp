// The HTTP/2 connection (h2/connection_impl.hpp): its SETTINGS first, the writing half (each
// pull writes the control frames and response heads queued, then DATA from the streams with
// window, round-robin, into the one output buffer), the GOAWAYs, deadlines and the stop. The
// reading half is connection_read.cpp, the bounds across streams connection_bounds.cpp.

#include "h2/connection_impl.hpp"

#include "h2/stream.hpp"

#include <algorithm>
#include <limits>
#include <utility>

namespace tern::detail {

namespace {

namespace frames = h2::frames;
using frames::error_code;
using frames::frame_type;
using action = h2::stream_states::action;

// The HPACK table of the decoder (requests): the protocol's default. A client cannot make
// it larger. The encoder's is hpack::encoder_table_size (1 KiB) or the client's, if smaller.
constexpr std::uint32_t hpack_table_size = 4096;

// The windows come back in pieces of at least this many bytes (half the initial window).
constexpr std::uint64_t window_batch = 32768;

// The two-step shutdown (RFC 9113 6.8): how long the shutdown PING's acknowledgement is
// waited for before the final GOAWAY goes out anyway.
constexpr std::chrono::milliseconds shutdown_notice_wait{1000};

}  // namespace

h2_connection::h2_connection(protocol_host& host, h2_peer peer)
    : host_(host),
      peer_(std::move(peer)),
      states_(host.settings().http2.max_concurrent_streams,
              2 * std::size_t{host.settings().http2.max_concurrent_streams}),
      decoder_(hpack_table_size),
      guard_(host.settings().http2.max_concurrent_streams),
      idle_since_(clock::now()),
      max_spares_(std::min<std::size_t>(host.settings().http2.max_concurrent_streams, 128)) {
    const auto& cfg = host.settings();
    head_limits_.max_header_count = cfg.limits.max_header_count;
    head_limits_.max_header_size = cfg.limits.max_header_size;
    head_limits_.max_line_size = cfg.limits.max_line_size;
    streams_.reserve(std::min<std::size_t>(cfg.http2.max_concurrent_streams, 128));

    // The server's SETTINGS, the first frame it sends (RFC 9113 3.4).
    const auto header_list = static_cast<std::uint32_t>(
        std::min<std::size_t>(cfg.limits.max_header_size + cfg.limits.max_line_size,
                              std::numeric_limits<std::uint32_t>::max()));
    header_block_cut_ = 2 * std::size_t{header_list};
    const std::array<frames::setting_entry, 3> settings = {{
        {frames::setting_id::max_concurrent_streams, cfg.http2.max_concurrent_streams},
        {frames::setting_id::max_header_list_size, header_list},
        {frames::setting_id::header_table_size, hpack_table_size},
    }};
    frames::write_settings(pending_, settings);
}

h2_connection::~h2_connection() {
    for (auto& [id, stream] : streams_) stream->detach();
}

std::shared_ptr<upgraded_protocol> make_h2_connection(protocol_host& host, h2_peer peer) {
    return std::make_shared<h2_connection>(host, std::move(peer));
}

void h2_connection::attach(std::shared_ptr<loop_door> door, std::weak_ptr<exchange_port> port) {
    door_ = std::move(door);
    port_ = std::move(port);
}

h2_stream* h2_connection::find(std::uint32_t id) const noexcept {
    // The table is in id order: streams are appended as they open, with ids that only climb
    // (RFC 9113 5.1.1), and erase_if keeps the order.
    if (streams_.empty() || id > streams_.back().first) return nullptr;
    const auto it =
        std::lower_bound(streams_.begin(), streams_.end(), id,
                         [](const auto& entry, std::uint32_t x) { return entry.first < x; });
    return it != streams_.end() && it->first == id ? it->second.get() : nullptr;
}

// ---- writing -------------------------------------------------------------------------------

void h2_connection::send_head(h2_stream& stream, const response& res, bool ends) {
    // A stream reset meanwhile (not yet swept from the table) gets no head after its reset.
    if (states_.state_of(stream.id()) == h2::stream_states::state::closed) return;
    const std::size_t start = frames::begin_headers(pending_);
    encoder_.begin_block(pending_);
    encoder_.status(res.status, pending_);
    // Encoded straight from the response: no array of name/value pairs in between.
    head_fields_.each(res, [this](std::string_view name, std::string_view value) {
        encoder_.field(name, value, pending_);
    });
    frames::end_headers(pending_, start, stream.id(), ends, peer_max_frame_);
    if (ends) on_end_sent(stream);
}

void h2_connection::send_trailers(h2_stream& stream, bool done) {
    if (states_.state_of(stream.id()) == h2::stream_states::state::closed) return;
    const std::size_t start = frames::begin_headers(pending_);
    encoder_.begin_block(pending_);
    for (const auto& [name, value] : stream.trailers()) encoder_.field(name, value, pending_);
    frames::end_headers(pending_, start, stream.id(), true, peer_max_frame_);
    if (done) on_end_sent(stream);
}

void h2_connection::send_continue(std::uint32_t id) {
    if (states_.state_of(id) == h2::stream_states::state::closed) return;
    const std::size_t start = frames::begin_headers(pending_);
    encoder_.begin_block(pending_);
    encoder_.status(100, pending_);
    frames::end_headers(pending_, start, id, false, peer_max_frame_);
}

void h2_connection::reset(h2_stream& stream, error_code code) noexcept {
    if (stream.closed()) return;
    stream_error(stream.id(), code);
}

void h2_connection::give_window(std::uint32_t id, std::uint64_t n) noexcept {
    if (failed_ || ended_ || n == 0) return;
    h2_stream* stream = find(id);
    if (stream == nullptr) return;
    if (const auto give = stream->give_back(n); give != 0) {
        frames::write_window_update(pending_, id, give);
    }
}

void h2_connection::on_end_sent(h2_stream& stream) {
    stream.on_response_sent();
    states_.on_end_stream_sent(stream.id());
    // RFC 9113 8.1: a response sent before the request ended (a refusal, a handler that did
    // not read the body) ends the client's side too, without an error.
    if (!stream.request_ended() && !stream.closed()) {
        states_.on_reset_sent(stream.id());
        frames::write_rst_stream(pending_, stream.id(), error_code::no_error);
        on_reset_sent(stream.id(), error_code::no_error);
    }
}

void h2_connection::write_data(std::string& out, std::size_t max) {
    // Round-robin: each stream with window writes one frame per turn, from where the last
    // pull left off, until the buffer is full or no stream can write.
    bool progress = true;
    while (progress && out.size() < max && !failed_) {
        progress = false;
        const std::size_t n = streams_.size();
        for (std::size_t k = 0; k < n && out.size() < max; ++k) {
            const std::size_t at = (next_sender_ + k) % n;
            h2_stream& s = *streams_[at].second;
            if (!s.wants_send()) continue;
            const std::int64_t window = std::min(send_window_, s.send_window());
            const auto allowed = static_cast<std::size_t>(
                std::clamp<std::int64_t>(window, 0, std::int64_t{peer_max_frame_}));
            std::size_t flow = 0;
            const auto wrote = s.write_data(out, allowed, flow);
            if (wrote == h2_stream::wrote::nothing) continue;
            if (wrote == h2_stream::wrote::failed) {
                // Frames written by then are in `out`; the reset follows them.
                stream_error(s.id(), error_code::internal_error);
                out += pending_;
                pending_.clear();
                continue;
            }
            progress = true;
            send_window_ -= static_cast<std::int64_t>(flow);
            s.sent(flow);
            data_sent_ += flow;
            if (wrote == h2_stream::wrote::last) {
                // Trailers after the last DATA: queued behind the header blocks pending_ holds
                // (HPACK's order), which go out with them now.
                if (s.trails()) send_trailers(s, false);
                on_end_sent(s);
                out += pending_;  // the RST_STREAM NO_ERROR of an early answer, right after
                pending_.clear();
            }
        }
        if (n != 0) next_sender_ = (next_sender_ + 1) % n;
    }
}

pull_status h2_connection::pull(std::string& out, std::size_t max) {
    if (ended_) return pull_status::aborted;
    if (broken_) return pull_status::aborted;
    busy_ = true;
    check_deadlines(clock::now());
    // Control frames and heads first, then DATA; then the handlers of streams that waited
    // for what those frames freed, and the windows of request bodies that waited for it.
    for (int round = 0; round < 64; ++round) {
        if (recv_consumed_ >= window_batch || (recv_consumed_ != 0 && recv_window_ < 32768)) {
            frames::write_window_update(pending_, 0, static_cast<std::uint32_t>(recv_consumed_));
            recv_window_ += static_cast<std::int64_t>(recv_consumed_);
            recv_consumed_ = 0;
        }
        out += pending_;
        pending_.clear();
        queued_control_ = 0;
        if (failed_) break;
        write_data(out, max);
        bury_closed();
        const auto before = waiting_.size();
        if (before != 0) admit();
        const bool given = settle_bodies();
        if (pending_.empty() && !given && waiting_.size() == before) break;
        if (out.size() >= max) break;
    }
    bury();
    busy_ = false;
    if (failed_) return pending_.empty() ? pull_status::ended : pull_status::more;
    // Done: GOAWAY sent (or received) and every stream over.
    if ((going_away_ || peer_gone_) && streams_.empty() && pending_.empty()) {
        return pull_status::ended;
    }
    return pull_status::more;
}

void h2_connection::bury_closed() noexcept {
    // Streams whose both sides ended, or that were reset, leave the table (the state machine
    // keeps what 5.1 needs of them).
    for (auto& entry : streams_) {
        h2_stream& s = *entry.second;
        if (!s.closed() && states_.state_of(entry.first) == h2::stream_states::state::closed) {
            s.on_close();
        }
    }
    const auto before = streams_.size();
    std::erase_if(streams_, [this](auto& entry) {
        if (!entry.second->closed()) return false;
        graveyard_.push_back(std::move(entry.second));  // not destroyed while walked
        return true;
    });
    if (before != 0 && streams_.empty()) idle_since_ = clock::now();
    if (next_sender_ >= streams_.size()) next_sender_ = 0;
}

void h2_connection::bury() noexcept {
    for (auto& s : graveyard_) {
        // Only the graveyard holds it: nothing reads its request or response again.
        if (s.use_count() == 1 && spares_.size() < max_spares_) {
            s->give_buffers(spares_.emplace_back());
        }
    }
    graveyard_.clear();
}

void h2_connection::closed() noexcept {
    if (ended_) return;
    ended_ = true;
    // The connection is gone: every stream's held response, blocking work and body source
    // is told, and the streams let go of this connection.
    auto streams = std::exchange(streams_, {});
    for (auto& [id, stream] : streams) {
        stream->on_close();
        stream->detach();
    }
    ready_.clear();
    waiting_.clear();
}

void h2_connection::want_write() noexcept {
    if (busy_ || ended_) return;
    if (auto port = port_.lock()) port->wake();
}

void h2_connection::count_answer() {
    ++answered_;
    const auto limit = host_.settings().limits.max_requests_per_connection;
    if (limit != 0 && answered_ >= limit && !going_away_) go_away(error_code::no_error);
}

void h2_connection::go_away(error_code code) noexcept {
    going_away_ = true;
    frames::write_goaway(pending_, last_taken_, code);
    states_.on_goaway_sent(last_taken_);
}

void h2_connection::fail(error_code code) noexcept {
    if (failed_ || broken_) return;
    go_away(code);
    failed_ = true;
}

void h2_connection::on_reset_sent(std::uint32_t /*id*/, error_code code) {
    // Every stream the server resets cost it a stream's work, whoever broke it: a malformed
    // request (PROTOCOL_ERROR), one over the concurrency limit (REFUSED_STREAM), a header
    // block cut short (INTERNAL_ERROR), a stalled window (CANCEL). So they count against the
    // client's reset budget like its own RST_STREAM frames: a client cannot make the server
    // reset streams at the rate of a rapid reset either. Not the NO_ERROR reset after an
    // early answer (RFC 9113 8.1): the server chose to answer early. The state machine
    // remembers the stream, so that frames the client sent before it saw the reset are
    // ignored.
    if (code == error_code::no_error) return;
    if (!guard_.allow(flood_guard::kind::reset, clock::now())) calm_down();
}

bool h2_connection::on_closing() noexcept {
    if (ended_ || broken_ || failed_ || going_away_ || shutdown_notice_at_ != clock::time_point{}) {
        return false;
    }
    // RFC 9113 6.8: a GOAWAY with the highest stream id first, so that the streams the
    // client has on the way are still taken, and a PING; the final GOAWAY, naming the last
    // stream taken, follows the PING's acknowledgement (or shutdown_notice_wait). The
    // streams up to it finish; the client opens new ones elsewhere.
    frames::write_goaway(pending_, frames::max_stream_id, error_code::no_error);
    frames::write_ping(pending_, shutdown_ping, false);
    shutdown_notice_at_ = clock::now();
    return true;
}

void h2_connection::finish_shutdown() noexcept {
    if (shutdown_notice_at_ == clock::time_point{} || going_away_ || broken_ || ended_) return;
    go_away(error_code::no_error);
}

void h2_connection::calm_down() { fail(error_code::enhance_your_calm); }

std::chrono::milliseconds h2_connection::idle_interval() const noexcept {
    const auto now = clock::now();
    auto next = clock::time_point::max();
    if (streams_.empty()) {
        next = idle_since_ + host_.settings().timeouts.keep_alive;
        // Spare buffers are let go a second after the last stream (on_idle).
        if (!spares_.empty()) next = std::min(next, idle_since_ + spare_linger);
    }
    for (const auto& [id, stream] : streams_) next = std::min(next, stream->next_deadline());
    next = std::min(next, send_rate_deadline());
    if (shutdown_notice_at_ != clock::time_point{} && !going_away_) {
        next = std::min(next, shutdown_notice_at_ + shutdown_notice_wait);
    }
    if (next == clock::time_point::max()) return host_.settings().timeouts.keep_alive;
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(next - now);
    return std::max(left, std::chrono::milliseconds(1));
}

void h2_connection::on_idle() {
    // What the checks queue (a 408, a reset) is sent by the pull the connection makes right
    // after: no wake-up from inside this call.
    busy_ = true;
    check_deadlines(clock::now());
    bury_closed();
    bury();
    // A connection without streams for spare_linger keeps no spare buffers: an idle
    // connection holds no more memory than before they were kept.
    if (streams_.empty() && clock::now() >= idle_since_ + spare_linger) {
        std::vector<exchange_buffers>().swap(spares_);
    }
    busy_ = false;
}

void h2_connection::check_deadlines(clock::time_point now) {
    if (broken_ || ended_ || failed_) return;
    // The shutdown notice's PING was not acknowledged in time: the final GOAWAY goes anyway.
    if (shutdown_notice_at_ != clock::time_point{} && !going_away_ &&
        now >= shutdown_notice_at_ + shutdown_notice_wait) {
        finish_shutdown();
    }
    // No stream for timeouts.keep_alive: the client is told and the connection ends.
    if (streams_.empty() && !going_away_ &&
        now >= idle_since_ + host_.settings().timeouts.keep_alive) {
        go_away(error_code::no_error);
        return;
    }
    // A copy (kept between calls, so a pull allocates nothing): a check may close its stream.
    checked_.clear();
    for (auto& [id, stream] : streams_) checked_.push_back(stream);
    bool late = false;
    for (auto& stream : checked_) {
        if (!stream->check(now)) {
            late = true;
            break;
        }
    }
    checked_.clear();
    if (late) {
        // A header block that did not complete within timeouts.header.
        fail(error_code::no_error);
        return;
    }
    check_send_rate(now);
}

bool h2_connection::end_on_stop() noexcept {
    if (ended_ || broken_ || failed_) return false;
    on_closing();  // the two-step GOAWAY, unless the grace period has begun it
    std::vector<std::shared_ptr<h2_stream>> streams;
    for (auto& [id, stream] : streams_) streams.push_back(stream);
    busy_ = true;  // the connection pulls after this call
    for (auto& stream : streams) stream->stop();
    busy_ = false;
    // The connection pulls now: the GOAWAYs go out, then the connection ends with its last
    // stream (or at the drain deadline).
    return true;
}

}  // namespace tern::detail

#include "h2/connection_impl.hpp"

#include "h2/stream.hpp"

#include <nghttp2/nghttp2.h>

#include <algorithm>
#include <array>
#include <limits>
#include <new>
#include <utility>

// Last: nghttp2's functions through the table that loads it on first use.
#include "h2/calls.hpp"

namespace tern::detail {

namespace {

// The HPACK table of the encoder (tern's responses) and the decoder (requests): the
// protocol's default. A client cannot make either larger.
constexpr std::uint32_t hpack_table_size = 4096;

// Header blocks cut short (an HPACK bomb) a connection may send before it is closed.
constexpr std::size_t max_cut_blocks = 3;

// The two-step shutdown (RFC 9113 6.8): the PING sent with the shutdown notice, and how long
// its acknowledgement is waited for before the final GOAWAY goes out anyway.
constexpr std::array<std::uint8_t, 8> shutdown_ping = {'t', 'e', 'r', 'n', '-', 'b', 'y', 'e'};
constexpr std::chrono::milliseconds shutdown_notice_wait{1000};

h2_connection& self(void* user_data) noexcept { return *static_cast<h2_connection*>(user_data); }

h2_stream* stream_of(nghttp2_session* s, std::int32_t id) noexcept {
    return static_cast<h2_stream*>(nghttp2_session_get_stream_user_data(s, id));
}

std::string_view text(const std::uint8_t* p, std::size_t n) noexcept {
    return {reinterpret_cast<const char*>(p), n};
}

}  // namespace

struct h2_connection::callbacks {
    // Every frame's header, before its payload: a HEADERS frame's stream id is checked
    // against the ids the client opened before (RFC 9113 5.1.1; h2/stream_order.hpp).
    // Ids nghttp2 refuses itself (0, even) are left to it.
    static int on_begin_frame(nghttp2_session* s, const nghttp2_frame_hd* hd, void* ud) {
        if (hd->type != NGHTTP2_HEADERS || hd->stream_id <= 0 || hd->stream_id % 2 == 0) {
            return 0;
        }
        auto& me = self(ud);
        nghttp2_stream* stream = nghttp2_session_find_stream(s, hd->stream_id);
        const auto state =
            stream != nullptr ? nghttp2_stream_get_state(stream) : NGHTTP2_STREAM_STATE_CLOSED;
        const bool open =
            state != NGHTTP2_STREAM_STATE_CLOSED && state != NGHTTP2_STREAM_STATE_IDLE;
        // After a GOAWAY nghttp2 ignores streams above the last one it took, trailers on them
        // included: those are no error, and the streams in flight finish.
        if (me.order_.on_headers(hd->stream_id, open) == stream_order::verdict::out_of_order &&
            !me.going_away_ && !me.broken_) {
            // nghttp2 ignores the block (it keeps its HPACK state); the GOAWAY names the last
            // stream it took.
            me.going_away_ = true;
            nghttp2_session_terminate_session(s, NGHTTP2_PROTOCOL_ERROR);
        }
        return 0;
    }

    static int on_begin_headers(nghttp2_session* s, const nghttp2_frame* frame, void* ud) {
        if (frame->hd.type != NGHTTP2_HEADERS || frame->headers.cat != NGHTTP2_HCAT_REQUEST) {
            return 0;
        }
        auto& me = self(ud);
        auto stream =
            std::make_shared<h2_stream>(me, frame->hd.stream_id, me.head_limits_, clock::now());
        nghttp2_session_set_stream_user_data(s, frame->hd.stream_id, stream.get());
        me.streams_.emplace(frame->hd.stream_id, std::move(stream));
        return 0;
    }

    static int on_header(nghttp2_session* s, const nghttp2_frame* frame, const std::uint8_t* name,
                         std::size_t name_length, const std::uint8_t* value,
                         std::size_t value_length, std::uint8_t /*flags*/, void* ud) {
        if (frame->hd.type != NGHTTP2_HEADERS) return 0;
        h2_stream* stream = stream_of(s, frame->hd.stream_id);
        if (stream == nullptr) return 0;
        auto& me = self(ud);
        if (stream->on_field(text(name, name_length), text(value, value_length),
                             frame->headers.cat != NGHTTP2_HCAT_REQUEST, me.header_block_cut_)) {
            return 0;
        }
        // An HPACK bomb: a block decoded to twice the SETTINGS_MAX_HEADER_LIST_SIZE tern
        // announced is refused whatever follows, so its decoding stops here (each field would
        // cost a check of its bytes by nghttp2 and a call into tern, for fields a one-byte
        // index can repeat from the table). nghttp2 resets the stream (INTERNAL_ERROR) and
        // passes over the rest of the block without calling back; a client that does it
        // again and again is an attacker.
        if (++me.cut_blocks_ >= max_cut_blocks) {
            me.calm_down();
            return NGHTTP2_ERR_CALLBACK_FAILURE;  // not one more field of this block
        }
        return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
    }

    static int on_frame_recv(nghttp2_session* s, const nghttp2_frame* frame, void* ud) {
        auto& me = self(ud);
        const auto now = clock::now();
        const bool end = (frame->hd.flags & NGHTTP2_FLAG_END_STREAM) != 0;
        h2_stream* stream = stream_of(s, frame->hd.stream_id);
        switch (frame->hd.type) {
            case NGHTTP2_HEADERS:
                if (stream == nullptr) return 0;
                if (frame->headers.cat == NGHTTP2_HCAT_REQUEST) {
                    stream->on_head(end, now);
                } else if (end) {
                    stream->on_end();  // after trailers
                }
                break;
            case NGHTTP2_DATA:
                if (frame->hd.length == 0 && !end &&
                    !me.guard_.allow(flood_guard::kind::empty_data, now)) {
                    me.calm_down();
                    return 0;
                }
                if (stream != nullptr && end) stream->on_end();
                break;
            case NGHTTP2_RST_STREAM:
                if (!me.guard_.allow(flood_guard::kind::reset, now)) me.calm_down();
                break;
            case NGHTTP2_PING:
                if ((frame->hd.flags & NGHTTP2_FLAG_ACK) == 0) {
                    if (!me.guard_.allow(flood_guard::kind::ping, now)) me.calm_down();
                } else if (std::equal(shutdown_ping.begin(), shutdown_ping.end(),
                                      frame->ping.opaque_data)) {
                    // A round trip since the shutdown notice: every stream the client sent
                    // before it saw the notice has arrived.
                    me.finish_shutdown();
                }
                break;
            case NGHTTP2_SETTINGS:
                if ((frame->hd.flags & NGHTTP2_FLAG_ACK) == 0 &&
                    !me.guard_.allow(flood_guard::kind::settings, now)) {
                    me.calm_down();
                }
                break;
            case NGHTTP2_PRIORITY:
                if (!me.guard_.allow(flood_guard::kind::priority, now)) me.calm_down();
                break;
            default:
                break;
        }
        if (stream != nullptr && stream->take_ready()) {
            me.ready_.push_back(stream->self());
        }
        return 0;
    }

    static int on_data_chunk(nghttp2_session* s, std::uint8_t /*flags*/, std::int32_t id,
                             const std::uint8_t* data, std::size_t length, void* /*ud*/) {
        // Windows are given back by hand (nghttp2_option_set_no_auto_window_update): the
        // connection's at once, a stream's when its bytes are let go or the connection's
        // bodies in memory allow (http2.max_body_memory, http/body_memory.hpp). nghttp2
        // gives back padding and the DATA it ignores itself.
        nghttp2_session_consume_connection(s, length);
        if (h2_stream* stream = stream_of(s, id)) {
            stream->on_body(text(data, length), clock::now());
        } else {
            nghttp2_session_consume_stream(s, id, length);
        }
        return 0;
    }

    static int on_frame_send(nghttp2_session* s, const nghttp2_frame* frame, void* ud) {
        auto& me = self(ud);
        if (frame->hd.type == NGHTTP2_DATA) me.data_sent_ += frame->hd.length;
        if (frame->hd.type == NGHTTP2_RST_STREAM) {
            me.on_reset_sent(frame->hd.stream_id, frame->rst_stream.error_code);
            return 0;
        }
        if ((frame->hd.flags & NGHTTP2_FLAG_END_STREAM) == 0) return 0;
        if (frame->hd.type != NGHTTP2_HEADERS && frame->hd.type != NGHTTP2_DATA) return 0;
        h2_stream* stream = stream_of(s, frame->hd.stream_id);
        if (stream == nullptr) return 0;
        stream->on_response_sent();
        // RFC 9113 8.1: a response sent before the request ended (a refusal, a handler that
        // did not read the body) ends the client's side too, without an error.
        if (!stream->request_ended()) {
            nghttp2_submit_rst_stream(s, NGHTTP2_FLAG_NONE, frame->hd.stream_id, NGHTTP2_NO_ERROR);
        }
        return 0;
    }

    static int on_stream_close(nghttp2_session* /*s*/, std::int32_t id, std::uint32_t /*error*/,
                               void* ud) {
        self(ud).bury(id);
        return 0;
    }
};

namespace {

// One table of callbacks for every connection (nghttp2 copies it into each session).
struct callback_table {
    nghttp2_session_callbacks* table = nullptr;
    callback_table() {
        if (nghttp2_session_callbacks_new(&table) != 0) throw std::bad_alloc();
        using c = h2_connection::callbacks;
        nghttp2_session_callbacks_set_on_begin_frame_callback(table, c::on_begin_frame);
        nghttp2_session_callbacks_set_on_begin_headers_callback(table, c::on_begin_headers);
        nghttp2_session_callbacks_set_on_header_callback(table, c::on_header);
        nghttp2_session_callbacks_set_on_frame_recv_callback(table, c::on_frame_recv);
        nghttp2_session_callbacks_set_on_data_chunk_recv_callback(table, c::on_data_chunk);
        nghttp2_session_callbacks_set_on_frame_send_callback(table, c::on_frame_send);
        nghttp2_session_callbacks_set_on_stream_close_callback(table, c::on_stream_close);
    }
    ~callback_table() { nghttp2_session_callbacks_del(table); }
    callback_table(const callback_table&) = delete;
    callback_table& operator=(const callback_table&) = delete;
};

}  // namespace

h2_connection::h2_connection(protocol_host& host, h2_peer peer)
    : host_(host),
      peer_(std::move(peer)),
      memory_(host.blocks()),
      guard_(host.settings().http2.max_concurrent_streams),
      order_(2 * std::size_t{host.settings().http2.max_concurrent_streams}),
      idle_since_(clock::now()) {
    const auto& cfg = host.settings();
    head_limits_.max_header_count = cfg.limits.max_header_count;
    head_limits_.max_header_size = cfg.limits.max_header_size;
    head_limits_.max_line_size = cfg.limits.max_line_size;

    static const callback_table table;
    nghttp2_option* options = nullptr;
    if (nghttp2_option_new(&options) != 0) throw std::bad_alloc();
    nghttp2_option_set_max_deflate_dynamic_table_size(options, hpack_table_size);
    // Request bodies' windows come back as tern lets their bytes go, not as they arrive
    // (on_data_chunk): what one connection holds of bodies in memory is bounded.
    nghttp2_option_set_no_auto_window_update(options, 1);
    // nghttp2 keeps closed streams (its default, not nghttp2_option_set_no_closed_streams):
    // DATA on a stream that closed must be a STREAM_CLOSED error (RFC 9113 5.1, h2spec
    // http2/5.1/5, 5.1/8, 5.1/11, 6.1/2), which needs the stream's closed state.
    const int made =
        nghttp2_session_server_new3(&session_, table.table, this, options, memory_.mem());
    nghttp2_option_del(options);
    if (made != 0) throw std::bad_alloc();

    // The server's SETTINGS, the first frame it sends (RFC 9113 3.4).
    const auto header_list = static_cast<std::uint32_t>(
        std::min<std::size_t>(cfg.limits.max_header_size + cfg.limits.max_line_size,
                              std::numeric_limits<std::uint32_t>::max()));
    header_block_cut_ = 2 * std::size_t{header_list};
    const std::array<nghttp2_settings_entry, 3> settings = {{
        {NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, cfg.http2.max_concurrent_streams},
        {NGHTTP2_SETTINGS_MAX_HEADER_LIST_SIZE, header_list},
        {NGHTTP2_SETTINGS_HEADER_TABLE_SIZE, hpack_table_size},
    }};
    nghttp2_submit_settings(session_, NGHTTP2_FLAG_NONE, settings.data(), settings.size());
}

h2_connection::~h2_connection() {
    for (auto& [id, stream] : streams_) stream->detach();
    nghttp2_session_del(session_);
}

std::shared_ptr<upgraded_protocol> make_h2_connection(protocol_host& host, h2_peer peer) {
    if (!nghttp2_available()) return nullptr;  // loaded at the first HTTP/2 connection
    return std::make_shared<h2_connection>(host, std::move(peer));
}

void h2_connection::attach(std::shared_ptr<loop_door> door, std::weak_ptr<exchange_port> port) {
    door_ = std::move(door);
    port_ = std::move(port);
}

bool h2_connection::receive(std::string_view bytes) {
    if (broken_ || ended_) return false;
    busy_ = true;
    const auto used = nghttp2_session_mem_recv(
        session_, reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
    if (used == NGHTTP2_ERR_BAD_CLIENT_MAGIC) {
        broken_ = true;  // not an HTTP/2 client: closed without a word
    } else if (used < 0) {
        // A flood nghttp2 caught itself (more than its limit of CONTINUATION frames in one
        // header block, the 2024 CONTINUATION flood; too many answers to PINGs and SETTINGS
        // left unread) or a callback's failure: the client is told before the close.
        const bool flood =
            used == NGHTTP2_ERR_FLOODED || used == NGHTTP2_ERR_TOO_MANY_CONTINUATIONS;
        nghttp2_session_terminate_session(
            session_, flood ? NGHTTP2_ENHANCE_YOUR_CALM : NGHTTP2_INTERNAL_ERROR);
        going_away_ = true;
    }
    // The handlers run after nghttp2 has returned: what they submit is sent by the pull that
    // follows every receive.
    waiting_.insert(waiting_.end(), ready_.begin(), ready_.end());
    ready_.clear();
    admit();
    graveyard_.clear();
    settle_bodies();  // what closed streams and spooled bodies let go
    busy_ = false;
    return !broken_ && nghttp2_session_want_read(session_) != 0;
}

pull_status h2_connection::pull(std::string& out, std::size_t max) {
    if (ended_) return pull_status::aborted;
    busy_ = true;
    check_deadlines(clock::now());
    // Frames, then the handlers of streams that waited for what those frames freed, and the
    // windows of request bodies that waited for it (streams closed as their answers went).
    while (pull_frames(out, max)) {
        const auto before = waiting_.size();
        if (before != 0) admit();
        const bool given = settle_bodies();
        if (!given && waiting_.size() == before) break;
    }
    graveyard_.clear();
    busy_ = false;
    if (broken_) return out.empty() ? pull_status::aborted : pull_status::ended;
    const bool reads = nghttp2_session_want_read(session_) != 0;
    const bool writes = nghttp2_session_want_write(session_) != 0;
    // Done: GOAWAY sent and every stream over (or nghttp2 wants nothing more either way).
    if ((!reads && !writes) || (going_away_ && streams_.empty() && !writes)) {
        return pull_status::ended;
    }
    return pull_status::more;
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
    if (limit != 0 && answered_ >= limit && !going_away_) go_away(NGHTTP2_NO_ERROR);
}

void h2_connection::go_away(std::uint32_t error_code) noexcept {
    going_away_ = true;
    nghttp2_submit_goaway(session_, NGHTTP2_FLAG_NONE,
                          nghttp2_session_get_last_proc_stream_id(session_), error_code, nullptr,
                          0);
}

void h2_connection::on_reset_sent(std::int32_t id, std::uint32_t error_code) {
    // Trailers the client sent before it saw this reset are still to be taken.
    order_.on_reset(id);
    // Every stream the server resets cost it a stream's work, whoever broke it: a malformed
    // request (nghttp2's PROTOCOL_ERROR), one over the concurrency limit (REFUSED_STREAM), a
    // header block cut short (INTERNAL_ERROR), a stalled window (CANCEL). So they count
    // against the client's reset budget like its own RST_STREAM frames: a client cannot
    // make the server reset streams at the rate of a rapid reset either. Not the NO_ERROR
    // reset after an early answer (RFC 9113 8.1): the server chose to answer early.
    if (error_code == NGHTTP2_NO_ERROR) return;
    if (!guard_.allow(flood_guard::kind::reset, clock::now())) calm_down();
}

bool h2_connection::on_closing() noexcept {
    if (ended_ || broken_ || going_away_ || shutdown_notice_at_ != clock::time_point{}) {
        return false;
    }
    // RFC 9113 6.8: a GOAWAY with the highest stream id first, so that the streams the
    // client has on the way are still taken, and a PING; the final GOAWAY, naming the last
    // stream taken, follows the PING's acknowledgement (or shutdown_notice_wait). The
    // streams up to it finish; the client opens new ones elsewhere.
    if (nghttp2_submit_shutdown_notice(session_) != 0 ||
        nghttp2_submit_ping(session_, NGHTTP2_FLAG_NONE, shutdown_ping.data()) != 0) {
        go_away(NGHTTP2_NO_ERROR);
        return true;
    }
    shutdown_notice_at_ = clock::now();
    return true;
}

void h2_connection::finish_shutdown() noexcept {
    if (shutdown_notice_at_ == clock::time_point{} || going_away_ || broken_ || ended_) return;
    go_away(NGHTTP2_NO_ERROR);
}

void h2_connection::calm_down() {
    if (broken_) return;
    going_away_ = true;
    nghttp2_session_terminate_session(session_, NGHTTP2_ENHANCE_YOUR_CALM);
}

void h2_connection::bury(std::int32_t id) noexcept {
    const auto it = streams_.find(id);
    if (it == streams_.end()) return;
    it->second->on_close();
    // Not destroyed inside nghttp2's call: receive and pull drop it afterwards.
    graveyard_.push_back(std::move(it->second));
    streams_.erase(it);
    if (streams_.empty()) idle_since_ = clock::now();
}

std::chrono::milliseconds h2_connection::idle_interval() const noexcept {
    const auto now = clock::now();
    auto next = clock::time_point::max();
    if (streams_.empty()) next = idle_since_ + host_.settings().timeouts.keep_alive;
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
    // What the checks submit (a 408, a reset) is sent by the pull the connection makes right
    // after: no wake-up from inside this call.
    busy_ = true;
    check_deadlines(clock::now());
    graveyard_.clear();
    busy_ = false;
}

void h2_connection::check_deadlines(clock::time_point now) {
    if (broken_ || ended_) return;
    // The shutdown notice's PING was not acknowledged in time: the final GOAWAY goes anyway.
    if (shutdown_notice_at_ != clock::time_point{} && !going_away_ &&
        now >= shutdown_notice_at_ + shutdown_notice_wait) {
        finish_shutdown();
    }
    // No stream for timeouts.keep_alive: the client is told and the connection ends.
    if (streams_.empty() && !going_away_ &&
        now >= idle_since_ + host_.settings().timeouts.keep_alive) {
        go_away(NGHTTP2_NO_ERROR);
        return;
    }
    // A copy: a check may close its stream.
    std::vector<std::shared_ptr<h2_stream>> streams;
    streams.reserve(streams_.size());
    for (auto& [id, stream] : streams_) streams.push_back(stream);
    for (auto& stream : streams) {
        if (!stream->check(now)) {
            // A header block that did not complete within timeouts.header.
            nghttp2_session_terminate_session(session_, NGHTTP2_NO_ERROR);
            going_away_ = true;
            return;
        }
    }
    check_send_rate(now);
}

bool h2_connection::end_on_stop() noexcept {
    if (ended_ || broken_) return false;
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

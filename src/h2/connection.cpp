#include "h2/connection_impl.hpp"

#include "h2/stream.hpp"

#include <algorithm>
#include <array>
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

// Header blocks cut short (an HPACK bomb) a connection may send before it is closed.
constexpr std::size_t max_cut_blocks = 3;

// Control frames (acknowledgements, resets) queued and not yet taken by the transport: a
// client that makes the server answer and does not read is closed (nghttp2's bound, 1,000,
// which tern had before it framed HTTP/2 itself).
constexpr std::size_t max_queued_control = 1000;

// The windows come back in pieces of at least this many bytes (half the initial window).
constexpr std::uint64_t window_batch = 32768;

// The two-step shutdown (RFC 9113 6.8): the PING sent with the shutdown notice, and how long
// its acknowledgement is waited for before the final GOAWAY goes out anyway.
constexpr std::array<std::uint8_t, 8> shutdown_ping = {'t', 'e', 'r', 'n', '-', 'b', 'y', 'e'};
constexpr std::chrono::milliseconds shutdown_notice_wait{1000};

std::string_view text(std::span<const std::uint8_t> bytes) noexcept {
    return {reinterpret_cast<const char*>(bytes.data()), bytes.size()};
}

std::span<const std::uint8_t> bytes_of(std::string_view s) noexcept {
    return {reinterpret_cast<const std::uint8_t*>(s.data()), s.size()};
}

}  // namespace

h2_connection::h2_connection(protocol_host& host, h2_peer peer)
    : host_(host),
      peer_(std::move(peer)),
      states_(host.settings().http2.max_concurrent_streams,
              2 * std::size_t{host.settings().http2.max_concurrent_streams}),
      decoder_(hpack_table_size),
      guard_(host.settings().http2.max_concurrent_streams),
      idle_since_(clock::now()) {
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
    // From the newest: most frames are on the streams opened last.
    for (auto it = streams_.rbegin(); it != streams_.rend(); ++it) {
        if (it->first == id) return it->second.get();
    }
    return nullptr;
}

// ---- reading -----------------------------------------------------------------------------

bool h2_connection::receive(std::string_view bytes) {
    if (broken_ || ended_) return false;
    // After a connection error nothing more is read; the transport stops reading once its
    // GOAWAY has been taken (until then the bytes are passed over).
    if (failed_) return !pending_.empty();
    busy_ = true;
    // Frames are read in place: from the bytes given when nothing is left over, else from
    // what is left with these appended (one copy only for a frame split between reads).
    std::string_view in = bytes;
    if (!input_.empty()) {
        input_.append(bytes);
        in = input_;
    }
    std::size_t used = 0;
    const auto now = clock::now();
    while (!failed_ && !broken_) {
        const auto read = reader_.next(bytes_of(in.substr(used)));
        used += read.consumed;
        if (read.status == frames::read_status::need_more) break;
        if (read.status == frames::read_status::connection_error) {
            if (!reader_.preface_done()) {
                broken_ = true;  // not an HTTP/2 client: closed without a word
            } else {
                fail(read.error.code);
            }
            break;
        }
        take(read, now);
    }
    if (input_.empty()) {
        if (used < in.size()) input_.assign(in.substr(used));
    } else {
        input_.erase(0, used);
    }
    // The handlers run once the frames are taken: what they send goes out with the pull
    // that follows every receive.
    bury_closed();
    waiting_.insert(waiting_.end(), ready_.begin(), ready_.end());
    ready_.clear();
    admit();
    bury_closed();
    graveyard_.clear();
    settle_bodies();  // what closed streams and spooled bodies let go
    busy_ = false;
    return !broken_;
}

void h2_connection::take(const frames::read_result& read, clock::time_point now) {
    const auto& frame = read.frame;
    auto verdict = states_.on_frame(read);
    if (verdict.what == action::connection_error) {
        // RFC 9113 5.1.1: a HEADERS frame whose id is not above every id the client opened
        // is a PROTOCOL_ERROR; 5.1 names STREAM_CLOSED for a stream both sides had ended,
        // which tern does not remember apart from an id skipped (docs/http2.md).
        fail(frame.type() == frame_type::headers ? error_code::protocol_error : verdict.code);
        return;
    }
    if (read.status == frames::read_status::stream_error && verdict.what == action::ignore &&
        frame.type() == frame_type::priority) {
        // A malformed PRIORITY frame on a closed stream: the stream error it is (RFC 9113 6.3)
        // cannot be sent on a stream that is gone, so it ends the connection, as nghttp2 did
        // (h2spec http2/6.3/2, whose stream the server has answered by then).
        fail(read.error.code);
        return;
    }
    if (verdict.what == action::stream_error) {
        // The state machine counts the stream as reset already; it leaves the table after.
        if (h2_stream* s = find(frame.header.stream_id)) s->stop_sending();
        frames::write_rst_stream(pending_, frame.header.stream_id, verdict.code);
        count_control();
        on_reset_sent(frame.header.stream_id, verdict.code);
    }
    switch (frame.type()) {
        case frame_type::headers:
            on_headers(frame, verdict, now);
            break;
        case frame_type::continuation:
            on_continuation(frame);
            break;
        case frame_type::data:
            on_data(frame, verdict, now);
            break;
        case frame_type::settings:
            on_settings(frame, now);
            break;
        case frame_type::window_update:
            if (verdict.what == action::accept) on_window_update(frame);
            break;
        case frame_type::ping:
            on_ping(frame, now);
            break;
        case frame_type::rst_stream:
            if (!guard_.allow(flood_guard::kind::reset, now)) {
                calm_down();
                return;
            }
            if (verdict.what == action::accept) on_client_reset(frame.header.stream_id, now);
            break;
        case frame_type::priority:
            // Checked by the reader, and otherwise ignored (RFC 9113 5.3.2).
            if (!guard_.allow(flood_guard::kind::priority, now)) calm_down();
            break;
        case frame_type::goaway:
            peer_gone_ = true;
            break;
        default:
            break;
    }
}

void h2_connection::on_headers(const frames::frame_view& frame, const h2::stream_states::verdict& v,
                               clock::time_point now) {
    const auto headers = frames::parse_headers(frame);
    const std::uint32_t id = frame.header.stream_id;
    block_stream_ = id;
    block_ends_ = headers.end_stream;
    block_ignored_ = v.what != action::accept;
    block_trailer_ = false;
    if (!block_ignored_) {
        if (h2_stream* s = find(id)) {
            block_trailer_ = true;  // a second block: trailers (the state machine checked)
            s->checks().begin(true);
        } else {
            auto stream =
                std::make_shared<h2_stream>(*this, id, head_limits_, peer_initial_window_, now);
            stream->checks().begin(false);
            streams_.emplace_back(id, std::move(stream));
            last_taken_ = std::max(last_taken_, id);
        }
    }
    if (headers.end_headers) {
        block_spans_ = false;
        on_block(headers.fragment, now);
        return;
    }
    // The block spans frames: its fragments are gathered (the one copy), bounded by the
    // reader's limit on CONTINUATION frames.
    block_spans_ = true;
    block_.assign(text(headers.fragment));
}

void h2_connection::on_continuation(const frames::frame_view& frame) {
    const auto cont = frames::parse_continuation(frame);
    block_.append(text(cont.fragment));
    if (!cont.end_headers) return;
    block_spans_ = false;
    // The block's stream may have been reset meanwhile: on_block finds out.
    on_block(bytes_of(block_), clock::now());
    block_.clear();
}

void h2_connection::on_block(std::span<const std::uint8_t> block, clock::time_point now) {
    h2_stream* stream = block_ignored_ ? nullptr : find(block_stream_);
    if (stream != nullptr && stream->closed()) stream = nullptr;
    // Fields are counted as they decode: a block decoded to twice the header list size tern
    // announced is refused whatever follows (an HPACK bomb), so no field past it is
    // delivered; one over max_header_count by a few is enough for the stream's 431.
    const h2::hpack::decode_limits limits{head_limits_.max_header_count + 8, header_block_cut_};
    bool malformed = false;
    const auto status = decoder_.decode(
        block, limits, [&](std::string_view name, std::string_view value, bool /*never*/) {
            if (stream == nullptr || malformed) return;
            if (!stream->checks().field(name, value)) {
                malformed = true;
                return;
            }
            stream->on_field(name, value, block_trailer_);
        });
    if (status == h2::hpack::decode_status::compression_error) {
        fail(error_code::compression_error);  // RFC 9113 4.3
        return;
    }
    if (stream == nullptr) return;
    if (status == h2::hpack::decode_status::too_large) {
        // An HPACK bomb, or a block far over the limits: the stream is reset; a client that
        // does it again and again is an attacker.
        if (++cut_blocks_ >= max_cut_blocks) {
            calm_down();
            return;
        }
        stream_error(block_stream_, error_code::internal_error);
        return;
    }
    if (malformed || !stream->checks().head_done(block_ends_) ||
        (block_trailer_ && !stream->checks().ended())) {
        stream_error(block_stream_, error_code::protocol_error);  // RFC 9113 8.1.1
        return;
    }
    if (!block_trailer_) {
        stream->on_head(block_ends_, now);
    } else {
        stream->on_end();
    }
    if (stream->take_ready()) ready_.push_back(stream->self());
}

void h2_connection::on_data(const frames::frame_view& frame, const h2::stream_states::verdict& v,
                            clock::time_point now) {
    const auto data = frames::parse_data(frame);
    if (data.flow_length == 0 && !data.end_stream &&
        !guard_.allow(flood_guard::kind::empty_data, now)) {
        calm_down();
        return;
    }
    // The connection's window counts every DATA frame, taken or not (RFC 9113 6.9), and
    // comes back at once.
    if (data.flow_length > recv_window_) {
        fail(error_code::flow_control_error);
        return;
    }
    recv_window_ -= data.flow_length;
    recv_consumed_ += data.flow_length;
    if (v.what != action::accept) return;
    const std::uint32_t id = frame.header.stream_id;
    h2_stream* stream = find(id);
    if (stream == nullptr) return;
    if (!stream->take_window(data.flow_length)) {
        stream_error(id, error_code::flow_control_error);
        return;
    }
    if (!stream->checks().data(data.data.size()) ||
        (data.end_stream && !stream->checks().ended())) {
        stream_error(id, error_code::protocol_error);  // the body and its content-length differ
        return;
    }
    // Padding is given back at once; the body's window as its bytes are let go.
    const std::uint32_t padding = data.flow_length - static_cast<std::uint32_t>(data.data.size());
    if (padding != 0) give_window(id, padding);
    if (!data.data.empty()) stream->on_body(text(data.data), now);
    if (data.end_stream) stream->on_end();
    if (stream->take_ready()) ready_.push_back(stream->self());
}

void h2_connection::on_settings(const frames::frame_view& frame, clock::time_point now) {
    const frames::settings_payload settings(frame);
    if (settings.ack()) return;  // tern's own settings need nothing once taken
    if (!guard_.allow(flood_guard::kind::settings, now)) {
        calm_down();
        return;
    }
    for (const auto entry : settings) {
        switch (static_cast<frames::setting_id>(entry.id)) {
            case frames::setting_id::header_table_size:
                encoder_.set_peer_max_table_size(entry.value);
                break;
            case frames::setting_id::initial_window_size: {
                // RFC 9113 6.9.2: every open stream's window moves by the difference.
                const std::int64_t delta = std::int64_t{entry.value} - peer_initial_window_;
                peer_initial_window_ = entry.value;
                for (auto& [id, stream] : streams_) {
                    if (!stream->grow_send_window(delta)) {
                        fail(error_code::flow_control_error);
                        return;
                    }
                }
                break;
            }
            case frames::setting_id::max_frame_size:
                peer_max_frame_ = entry.value;
                break;
            default:
                break;
        }
    }
    frames::write_settings_ack(pending_);
    count_control();
}

void h2_connection::on_window_update(const frames::frame_view& frame) {
    const std::uint32_t increment = frames::parse_window_update(frame);
    const std::uint32_t id = frame.header.stream_id;
    if (id == 0) {
        send_window_ += increment;
        if (send_window_ > std::int64_t{frames::max_window}) fail(error_code::flow_control_error);
        return;
    }
    h2_stream* stream = find(id);
    if (stream == nullptr) return;
    if (!stream->grow_send_window(increment)) stream_error(id, error_code::flow_control_error);
}

void h2_connection::on_ping(const frames::frame_view& frame, clock::time_point now) {
    const auto ping = frames::parse_ping(frame);
    if (ping.ack) {
        if (std::equal(shutdown_ping.begin(), shutdown_ping.end(), ping.opaque.begin())) {
            // A round trip since the shutdown notice: every stream the client sent before it
            // saw the notice has arrived.
            finish_shutdown();
        }
        return;
    }
    if (!guard_.allow(flood_guard::kind::ping, now)) {
        calm_down();
        return;
    }
    frames::write_ping(pending_, ping.opaque, true);
    count_control();
}

void h2_connection::on_client_reset(std::uint32_t id, clock::time_point /*now*/) {
    // The state machine closed it: it leaves the table after this read.
    if (h2_stream* stream = find(id)) stream->stop_sending();
}

void h2_connection::stream_error(std::uint32_t id, error_code code) noexcept {
    // The stream leaves the table (and is told it closed) when the table is next swept, not
    // inside the stream's own call.
    if (h2_stream* s = find(id)) s->stop_sending();
    states_.on_reset_sent(id);
    frames::write_rst_stream(pending_, id, code);
    count_control();
    on_reset_sent(id, code);
}

void h2_connection::count_control() noexcept {
    if (++queued_control_ > max_queued_control && !failed_) calm_down();
}

// ---- writing -------------------------------------------------------------------------------

void h2_connection::send_head(h2_stream& stream, const response& res, bool ends) {
    // A stream reset meanwhile (not yet swept from the table) gets no head after its reset.
    if (states_.state_of(stream.id()) == h2::stream_states::state::closed) return;
    response_fields_.build(res);
    const std::size_t start = frames::begin_headers(pending_);
    encoder_.begin_block(pending_);
    encoder_.status(res.status, pending_);
    for (const auto& f : response_fields_.fields()) {
        const std::string_view name(reinterpret_cast<const char*>(f.name), f.namelen);
        if (name == ":status") continue;
        encoder_.field(name, {reinterpret_cast<const char*>(f.value), f.valuelen}, pending_);
    }
    frames::end_headers(pending_, start, stream.id(), ends, peer_max_frame_);
    if (ends) on_end_sent(stream);
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
    graveyard_.clear();
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
    // What the checks queue (a 408, a reset) is sent by the pull the connection makes right
    // after: no wake-up from inside this call.
    busy_ = true;
    check_deadlines(clock::now());
    bury_closed();
    graveyard_.clear();
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

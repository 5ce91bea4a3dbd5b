// The reading half of the HTTP/2 connection (h2/connection_impl.hpp): the bytes read are
// framed in place, each frame judged by the stream state machine and taken: header blocks
// gathered and HPACK-decoded into their streams through the request checks, DATA to its
// stream within the flow-control windows, SETTINGS, PING, WINDOW_UPDATE, RST_STREAM, GOAWAY
// and PRIORITY, with the flood buckets counted on the way (docs/http2.md).

#include "h2/connection_impl.hpp"

#include "h2/stream.hpp"

#include <algorithm>
#include <utility>

namespace tern::detail {

namespace {

namespace frames = h2::frames;
using frames::error_code;
using frames::frame_type;
using action = h2::stream_states::action;

// Header blocks cut short (an HPACK bomb) a connection may send before it is closed.
constexpr std::size_t max_cut_blocks = 3;

// Control frames (acknowledgements, resets) queued and not yet taken by the transport: a
// client that makes the server answer and does not read is closed (nghttp2's bound, 1,000,
// which tern had before it framed HTTP/2 itself).
constexpr std::size_t max_queued_control = 1000;

std::string_view text(std::span<const std::uint8_t> bytes) noexcept {
    return {reinterpret_cast<const char*>(bytes.data()), bytes.size()};
}

std::span<const std::uint8_t> bytes_of(std::string_view s) noexcept {
    return {reinterpret_cast<const std::uint8_t*>(s.data()), s.size()};
}

}  // namespace

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
    bury();
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
            if (!spares_.empty()) {
                stream->take_buffers(spares_.back());
                spares_.pop_back();
            }
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

}  // namespace tern::detail

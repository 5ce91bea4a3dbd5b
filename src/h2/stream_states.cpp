#include "h2/stream_states.hpp"

#include <algorithm>
#include <utility>

namespace tern::h2 {

namespace {

using frames::error_code;
using frames::frame_type;

constexpr stream_states::verdict taken{};
constexpr stream_states::verdict dropped{stream_states::action::ignore, error_code::no_error, ""};

stream_states::verdict connection_error(error_code code, const char* reason) {
    return {stream_states::action::connection_error, code, reason};
}

bool is_error(const frames::failure& f) noexcept { return f.code != error_code::no_error; }

// Room for this many active streams is taken at once; a connection advertising more grows
// to its limit as streams open.
constexpr std::uint32_t reserved_streams = 128;

}  // namespace

stream_states::stream_states(std::uint32_t max_concurrent, std::size_t remembered_resets)
    : max_concurrent_(max_concurrent), resets_(std::max<std::size_t>(remembered_resets, 1), 0) {
    active_.reserve(std::min(max_concurrent, reserved_streams));
}

stream_states::verdict stream_states::on_frame(const frames::read_result& read) {
    const frames::failure none{};
    const auto& error = read.status == frames::read_status::stream_error ? read.error : none;
    const auto& h = read.frame.header;
    const verdict v = judge(h, error);
    if (h.type == static_cast<std::uint8_t>(frame_type::headers)) {
        // The CONTINUATION frames of a block share its fate.
        block_ignored_ = v.what != action::accept;
    }
    return v;
}

stream_states::verdict stream_states::judge(const frames::frame_header& h,
                                            const frames::failure& reader_error) {
    const auto type = static_cast<frame_type>(h.type);
    // The reader let through only the connection-level frames on stream 0, and only a
    // CONTINUATION that continues the block of the HEADERS frame before it.
    if (h.stream_id == 0) return taken;
    if (type == frame_type::continuation) return block_ignored_ ? dropped : taken;

    const std::uint32_t id = h.stream_id;
    if (entry* e = find(id)) {
        if (is_error(reader_error)) return reset(id, reader_error.code, reader_error.reason);
        const bool ends = (h.flags & frames::flag::end_stream) != 0;
        switch (type) {
            case frame_type::data:
            case frame_type::headers:
                // 5.1, half-closed (remote): nothing more but WINDOW_UPDATE, PRIORITY and
                // RST_STREAM.
                if (e->st == state::half_closed_remote) {
                    return reset(id, error_code::stream_closed,
                                 "frame after the client's END_STREAM");
                }
                // 8.1: a second header block is trailers, which end the stream.
                if (type == frame_type::headers && !ends) {
                    return reset(id, error_code::protocol_error, "trailers without END_STREAM");
                }
                if (ends) {
                    if (e->st == state::half_closed_local) {
                        close(e);  // both sides ended
                    } else {
                        e->st = state::half_closed_remote;
                    }
                }
                return taken;
            case frame_type::rst_stream:
                close(e);  // the client's reset: nothing to remember (see on_closed)
                return taken;
            default:
                return taken;  // PRIORITY, WINDOW_UPDATE
        }
    }

    // 5.1.1: the client opens odd ids only; tern never pushes, so an even id stays idle.
    const bool idle = id % 2 == 0 || id > highest_;
    if (!idle) return on_closed(h);
    if (type == frame_type::priority) {
        // 5.1: PRIORITY is allowed on an idle stream, which RST_STREAM may not name: a
        // malformed one ends the connection instead (nghttp2 does the same).
        return is_error(reader_error) ? connection_error(reader_error.code, reader_error.reason)
                                      : taken;
    }
    if (type != frame_type::headers) {
        return connection_error(error_code::protocol_error, "frame on an idle stream");
    }
    if (id % 2 == 0) {
        return connection_error(error_code::protocol_error, "HEADERS on an even stream id");
    }
    highest_ = id;
    if (id > goaway_last_) return dropped;  // 6.8: no new streams after tern's GOAWAY
    // The HEADERS frame opened the stream (idle -> open), so it can be reset.
    if (is_error(reader_error)) return reset(id, reader_error.code, reader_error.reason);
    // 5.1.2: REFUSED_STREAM tells the client the request was not processed and may be
    // retried.
    if (active_.size() >= max_concurrent_) {
        return reset(id, error_code::refused_stream, "over SETTINGS_MAX_CONCURRENT_STREAMS");
    }
    const bool ends = (h.flags & frames::flag::end_stream) != 0;
    active_.push_back({id, ends ? state::half_closed_remote : state::open});
    return taken;
}

stream_states::verdict stream_states::on_closed(const frames::frame_header& h) const {
    // 5.1, closed: frames the client sent before it saw tern's RST_STREAM (or GOAWAY) are
    // ignored. A stream error found by the reader is ignored too: nothing but PRIORITY may
    // be sent on a closed stream.
    if (h.stream_id > goaway_last_ || recently_reset(h.stream_id)) return dropped;
    switch (static_cast<frame_type>(h.type)) {
        case frame_type::data:
        case frame_type::headers:
            // 5.1: a stream the client ended or reset (or one tern reset too long ago, or
            // an id it skipped, which 5.1.1 closed): STREAM_CLOSED for the connection,
            // which 9113 allows for any frame on a closed stream. h2spec 5.1/8, 5.1/9,
            // 5.1/11, 5.1/12 and 6.1/2 (with the stream's request answered).
            return connection_error(error_code::stream_closed, "frame on a closed stream");
        default:
            // PRIORITY, and the WINDOW_UPDATE or RST_STREAM a client sends before it sees
            // the END_STREAM that closed the stream (5.1, closed).
            return dropped;
    }
}

void stream_states::on_end_stream_sent(std::uint32_t id) {
    entry* e = find(id);
    if (e == nullptr) return;
    if (e->st == state::half_closed_remote) {
        close(e);
    } else {
        e->st = state::half_closed_local;
    }
}

void stream_states::on_reset_sent(std::uint32_t id) {
    if (entry* e = find(id)) close(e);
    remember_reset(id);
}

void stream_states::on_goaway_sent(std::uint32_t last_id) noexcept {
    goaway_last_ = std::min(goaway_last_, last_id);
}

stream_states::state stream_states::state_of(std::uint32_t id) const noexcept {
    if (const entry* e = find(id)) return e->st;
    if (id == 0 || id % 2 == 0 || id > highest_) return state::idle;
    return state::closed;
}

bool stream_states::recently_reset(std::uint32_t id) const noexcept {
    return std::find(resets_.begin(), resets_.end(), id) != resets_.end();
}

std::size_t stream_states::memory() const noexcept {
    return sizeof(*this) + active_.capacity() * sizeof(entry) +
           resets_.capacity() * sizeof(std::uint32_t);
}

stream_states::entry* stream_states::find(std::uint32_t id) noexcept {
    return const_cast<entry*>(std::as_const(*this).find(id));
}

const stream_states::entry* stream_states::find(std::uint32_t id) const noexcept {
    // active_ is in id order: a stream is appended only with an id above every other
    // (5.1.1), and close keeps the order. With a hundred streams open on one connection a
    // scan cost more than the rest of the state machine. A stream being opened is above
    // them all.
    if (active_.empty() || id > active_.back().id) return nullptr;
    const auto it = std::lower_bound(active_.begin(), active_.end(), id,
                                     [](const entry& e, std::uint32_t x) { return e.id < x; });
    return it != active_.end() && it->id == id ? &*it : nullptr;
}

void stream_states::close(entry* e) noexcept {
    // erase keeps the id order find relies on (at most max_concurrent moves).
    active_.erase(active_.begin() + (e - active_.data()));
}

void stream_states::remember_reset(std::uint32_t id) noexcept {
    if (id == 0) return;
    resets_[next_reset_] = id;
    next_reset_ = (next_reset_ + 1) % resets_.size();
}

stream_states::verdict stream_states::reset(std::uint32_t id, error_code code, const char* reason) {
    if (entry* e = find(id)) close(e);
    remember_reset(id);
    return {action::stream_error, code, reason};
}

}  // namespace tern::h2

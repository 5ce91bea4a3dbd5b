#pragma once
// The stream state machine of RFC 9113 section 5.1, server side, transport-free: for each
// frame the reader (h2/frames.hpp) yields, what the connection does with it — take it,
// ignore it, reset its stream, or end the connection — and the state it leaves the stream
// in. h2_connection (h2/connection.cpp) asks it about every frame (docs/http2.md).
//
// Memory is bounded whatever the client does. Active streams (open and half-closed) are at
// most `max_concurrent` (a HEADERS over it is refused, REFUSED_STREAM). Closed streams need
// no memory to be told from idle ones: client stream ids only climb (5.1.1), so every id
// up to the highest seen that is not active is closed. What is remembered is only which of
// them tern itself reset lately, since frames the client sent before it saw the reset must
// be ignored, not answered with an error (5.1, "closed"); that memory is a ring of the last
// `remembered_resets` ids, which 5.1 allows ("MAY choose to limit the period").

#include "h2/frames.hpp"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace tern::h2 {

class stream_states {
public:
    /// The states of RFC 9113 5.1. tern never pushes, so no stream is ever reserved.
    enum class state : std::uint8_t {
        idle,
        open,
        reserved_local,
        reserved_remote,
        half_closed_remote,  ///< the client ended its side (END_STREAM received)
        half_closed_local,   ///< tern ended its side (END_STREAM sent)
        closed,
    };

    enum class action : std::uint8_t {
        accept,  ///< process the frame
        /// minimally process it (RFC 9113 5.1): count a DATA frame against the connection's
        /// window and decode a HEADERS or CONTINUATION fragment for HPACK's sake, then drop it
        ignore,
        /// send RST_STREAM with `code` on the frame's stream (the frame is dropped as for
        /// ignore); the stream is already counted as reset by tern
        stream_error,
        connection_error,  ///< send GOAWAY with `code` and close
    };

    struct verdict {
        action what = action::accept;
        frames::error_code code = frames::error_code::no_error;
        const char* reason = "";
    };

    /// `max_concurrent`: the SETTINGS_MAX_CONCURRENT_STREAMS tern advertised.
    /// `remembered_resets`: how many of the streams tern reset lately are remembered (at
    /// least 1); h2_connection keeps 2 x max_concurrent, the burst of resets its flood
    /// guard allows (docs/http2.md).
    stream_states(std::uint32_t max_concurrent, std::size_t remembered_resets);

    /// Judges a frame the reader yielded (read_status frame or stream_error) and moves its
    /// stream's state. A reader's stream error becomes a connection error on a stream that
    /// is idle (RST_STREAM may not be sent there, 5.1) and is ignored on a closed one.
    verdict on_frame(const frames::read_result& read);

    /// tern sent END_STREAM on `id` (the response's last HEADERS or DATA frame).
    void on_end_stream_sent(std::uint32_t id);
    /// tern sent RST_STREAM on `id` (its own stream errors: a malformed request, a flow-
    /// control error, a timeout; or ending the client's side after an early answer).
    void on_reset_sent(std::uint32_t id);
    /// tern sent GOAWAY naming `last_id`: HEADERS opening streams above it are ignored
    /// (RFC 9113 6.8), and so is every frame on them.
    void on_goaway_sent(std::uint32_t last_id) noexcept;

    state state_of(std::uint32_t id) const noexcept;
    /// The highest stream id the client opened (0: none).
    std::uint32_t highest() const noexcept { return highest_; }
    /// Open and half-closed streams (those SETTINGS_MAX_CONCURRENT_STREAMS counts).
    std::size_t active() const noexcept { return active_.size(); }
    /// Whether tern reset `id` recently enough to still ignore frames on it.
    bool recently_reset(std::uint32_t id) const noexcept;
    /// The bytes this object holds, for the test that it stays bounded.
    std::size_t memory() const noexcept;

private:
    struct entry {
        std::uint32_t id;
        state st;
    };

    entry* find(std::uint32_t id) noexcept;
    const entry* find(std::uint32_t id) const noexcept;
    void close(entry* e) noexcept;
    void remember_reset(std::uint32_t id) noexcept;
    verdict reset(std::uint32_t id, frames::error_code code, const char* reason);
    verdict judge(const frames::frame_header& h, const frames::failure& reader_error);
    verdict on_closed(const frames::frame_header& h) const;

    std::uint32_t max_concurrent_;
    std::uint32_t highest_ = 0;
    std::uint32_t goaway_last_ = 0x7fffffff;
    std::vector<entry> active_;          // at most max_concurrent_
    std::vector<std::uint32_t> resets_;  // a ring: the last streams tern reset
    std::size_t next_reset_ = 0;
    // The header block being continued was ignored (its HEADERS was): so are its
    // CONTINUATION frames.
    bool block_ignored_ = false;
};

}  // namespace tern::h2

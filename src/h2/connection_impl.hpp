#pragma once
// The HTTP/2 connection behind make_h2_connection (h2/connection.hpp), on tern's own frame
// layer (h2/frames.hpp), stream state machine (h2/stream_states.hpp) and HPACK (h2/hpack.hpp).
// Private to src/h2: the streams (h2/stream.cpp) call back into it.

#include "h2/connection.hpp"
#include "h2/flood_guard.hpp"
#include "h2/frames.hpp"
#include "h2/hpack.hpp"
#include "h2/stream_states.hpp"
#include "http/body_memory.hpp"
#include "http/field_section.hpp"
#include "http/stream_exchange.hpp"

#include <array>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace tern::detail {

class h2_stream;

class h2_connection final : public upgraded_protocol {
public:
    using clock = std::chrono::steady_clock;
    using error_code = h2::frames::error_code;
    /// The connection's streams: its own table, in the order they opened.
    using stream_table = std::vector<std::pair<std::uint32_t, std::shared_ptr<h2_stream>>>;

    h2_connection(protocol_host& host, h2_peer peer);
    ~h2_connection() override;
    h2_connection(const h2_connection&) = delete;
    h2_connection& operator=(const h2_connection&) = delete;

    // upgraded_protocol
    void attach(std::shared_ptr<loop_door> door, std::weak_ptr<exchange_port> port) override;
    bool receive(std::string_view bytes) override;
    pull_status pull(std::string& out, std::size_t max) override;
    void closed() noexcept override;
    std::chrono::milliseconds idle_interval() const noexcept override;
    void on_idle() override;
    bool on_closing() noexcept override;
    bool end_on_stop() noexcept override;

    // For the streams, on the loop.
    protocol_host& host() const noexcept { return host_; }
    const h2_peer& peer() const noexcept { return peer_; }
    const std::shared_ptr<loop_door>& loop() const noexcept { return door_; }
    /// A stream has frames to send: the connection is woken to pull them (unless it pulls
    /// anyway: inside receive or pull).
    void want_write() noexcept;
    /// Queues the response head of `stream` (HEADERS, CONTINUATION when it is longer than
    /// the client's SETTINGS_MAX_FRAME_SIZE); `ends`: it has no body.
    void send_head(h2_stream& stream, const response& res, bool ends);
    /// Queues the trailers of `stream` (a HEADERS frame with END_STREAM, RFC 9113 8.1) after
    /// its body; `done`: it is the response's last frame now (no body), counted as sent.
    void send_trailers(h2_stream& stream, bool done);
    /// Queues an interim 100 (Continue) head.
    void send_continue(std::uint32_t id);
    /// Resets `stream` (RST_STREAM with `code`); it closes.
    void reset(h2_stream& stream, error_code code) noexcept;
    /// Gives `n` bytes of window back to stream `id` (as its body's bytes are let go).
    void give_window(std::uint32_t id, std::uint64_t n) noexcept;
    /// The client's SETTINGS_MAX_FRAME_SIZE: the longest DATA payload tern sends.
    std::uint32_t max_frame_size() const noexcept { return peer_max_frame_; }
    /// A stream's request was answered (counted for max_requests_per_connection).
    void count_answer();
    /// A stream may open one more descriptor (a spooled body): the connection holds fewer
    /// than h2_max_open_files and the process is not short of descriptors.
    bool may_open_file();
    /// Whether `stream` may hold `bytes` of spooled request body beside the other streams'
    /// (config::h2_max_spooled_bytes).
    bool may_spool(const h2_stream& stream, std::uint64_t bytes) const;
    /// Whether `stream`, whose body just grew in memory, gets those bytes' window back now
    /// (http2.max_body_memory, http/body_memory.hpp); when not, the connection remembers
    /// that a stream owes.
    bool may_take_more(const h2_stream& stream);

private:
    // The PING sent with the shutdown notice (RFC 9113 6.8): its acknowledgement means every
    // stream the client sent before it saw the notice has arrived.
    static constexpr std::array<std::uint8_t, 8> shutdown_ping = {'t', 'e', 'r', 'n',
                                                                  '-', 'b', 'y', 'e'};

    // ---- reading (connection_read.cpp) ------------------------------------------------------
    void take(const h2::frames::read_result& read, clock::time_point now);
    void on_headers(const h2::frames::frame_view& frame, const h2::stream_states::verdict& v,
                    clock::time_point now);
    void on_continuation(const h2::frames::frame_view& frame);
    void on_block(std::span<const std::uint8_t> block, clock::time_point now);
    void on_data(const h2::frames::frame_view& frame, const h2::stream_states::verdict& v,
                 clock::time_point now);
    void on_settings(const h2::frames::frame_view& frame, clock::time_point now);
    void on_window_update(const h2::frames::frame_view& frame);
    void on_ping(const h2::frames::frame_view& frame, clock::time_point now);
    void on_client_reset(std::uint32_t id, clock::time_point now);
    // A stream error found by the connection (a malformed request, a window overflow).
    void stream_error(std::uint32_t id, error_code code) noexcept;

    // ---- writing ----------------------------------------------------------------------------
    // DATA from the streams with window, one frame each in turn (round-robin).
    void write_data(std::string& out, std::size_t max);
    // A stream's last frame (END_STREAM) went out.
    void on_end_sent(h2_stream& stream);
    // A control frame was queued: false when too many wait unread (the client does not read
    // what it makes the server answer).
    void count_control() noexcept;

    // ---- what one connection may hold (connection_bounds.cpp; docs/http2.md) ---------------
    void admit();
    // Gives back the request-body windows owed that the connection's bodies now allow:
    // true when it gave some (WINDOW_UPDATEs to send).
    bool settle_bodies();
    void check_send_rate(clock::time_point now);
    clock::time_point send_rate_deadline() const noexcept;

    void check_deadlines(clock::time_point now);
    void calm_down();  // GOAWAY ENHANCE_YOUR_CALM: a flood
    // A connection error: GOAWAY with `code`, then the connection ends.
    void fail(error_code code) noexcept;
    // A RST_STREAM went out (counted against the reset budget).
    void on_reset_sent(std::uint32_t id, error_code code);
    void go_away(error_code code) noexcept;
    // The second GOAWAY of the two-step shutdown (RFC 9113 6.8), naming the last stream taken.
    void finish_shutdown() noexcept;
    // Streams the state machine closed leave the table.
    void bury_closed() noexcept;
    // Lets go of the buried streams, keeping the buffers of those nothing else holds.
    void bury() noexcept;
    h2_stream* find(std::uint32_t id) const noexcept;

    protocol_host& host_;
    h2_peer peer_;
    std::shared_ptr<loop_door> door_;
    std::weak_ptr<exchange_port> port_;
    head_limits head_limits_;
    head_fields head_fields_;

    h2::frames::reader reader_;
    h2::stream_states states_;
    h2::hpack::decoder decoder_;
    h2::hpack::encoder encoder_;
    std::string input_;               // bytes received that do not make a whole frame yet
    std::string pending_;             // frames queued for the next pull: control frames and heads
    std::size_t queued_control_ = 0;  // control frames in pending_ (acks, resets)

    // The header block in progress.
    std::string block_;  // its fragments, when it spans frames
    std::uint32_t block_stream_ = 0;
    bool block_trailer_ = false;
    bool block_ends_ = false;     // END_STREAM came with its HEADERS frame
    bool block_ignored_ = false;  // decoded for HPACK's sake only
    bool block_spans_ = false;

    // A header block whose decoded size passes this (twice the SETTINGS_MAX_HEADER_LIST_SIZE
    // sent) is cut short: its stream is reset. After a few such blocks the connection ends.
    std::size_t header_block_cut_ = 0;
    std::size_t cut_blocks_ = 0;
    flood_guard guard_;

    // Flow control (RFC 9113 6.9): what the client lets tern send, and what tern has let the
    // client send on the connection; the connection's window comes back at once, batched.
    std::int64_t send_window_ = 65535;
    std::int64_t peer_initial_window_ = 65535;
    std::int64_t recv_window_ = 65535;
    std::uint64_t recv_consumed_ = 0;  // connection window to give back
    std::uint32_t peer_max_frame_ = h2::frames::default_max_frame_size;

    stream_table streams_;
    std::size_t next_sender_ = 0;                    // where the round of DATA begins
    std::vector<std::shared_ptr<h2_stream>> ready_;  // complete requests to run
    // Complete requests whose handlers wait, in order, while the connection holds its
    // bound of unsent bytes or open files (admit).
    std::vector<std::shared_ptr<h2_stream>> waiting_;
    std::vector<std::shared_ptr<h2_stream>> graveyard_;  // closed while the table is walked
    // Buffers of finished streams for the next ones (stream_exchange's exchange_buffers):
    // as many sets as streams may be open at once (up to 128), so that a client keeping
    // the limit busy on one connection allocates none; never more than the streams held
    // at their peak, each buffer bounded by exchange_buffers::spare_capacity; none once the
    // connection has had no stream for spare_linger.
    std::vector<exchange_buffers> spares_;
    static constexpr std::chrono::seconds spare_linger{1};
    std::vector<std::shared_ptr<h2_stream>> checked_;  // the streams check_deadlines walks
    // The connection's flow-control window holds its streams back: since when, and the
    // DATA bytes sent by then (check_send_rate).
    clock::time_point window_stalled_since_{};
    std::uint64_t window_stalled_sent_ = 0;
    std::uint64_t data_sent_ = 0;   // DATA payload bytes sent on the connection
    clock::time_point idle_since_;  // when the last stream closed (or the connection began)
    std::size_t max_spares_;        // sets spares_ keeps: the stream limit, at most 128
    // When the shutdown notice (a GOAWAY naming no last stream, and a PING) went out; the
    // epoch when it has not.
    clock::time_point shutdown_notice_at_{};
    std::uint32_t last_taken_ = 0;  // the highest stream whose request tern took
    std::size_t answered_ = 0;
    body_windows_owed owed_;   // request-body windows held back (http2.max_body_memory)
    bool busy_ = false;        // inside receive or pull: no wake-up needed
    bool broken_ = false;      // closed without a word (not an HTTP/2 client)
    bool failed_ = false;      // a connection error's GOAWAY is queued: the end
    bool going_away_ = false;  // GOAWAY sent: the connection ends with its streams
    bool peer_gone_ = false;   // the client sent GOAWAY
    bool ended_ = false;       // the connection closed
};

}  // namespace tern::detail

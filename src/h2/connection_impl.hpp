#pragma once
// The HTTP/2 connection behind make_h2_connection (h2/connection.hpp). Private to src/h2: the
// streams (h2/stream.cpp) call back into it.

#include "h2/connection.hpp"
#include "h2/flood_guard.hpp"
#include "h2/session_memory.hpp"
#include "h2/stream_order.hpp"
#include "http/body_memory.hpp"
#include "http/field_section.hpp"

#include <nghttp2/nghttp2.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace tern::detail {

class h2_stream;

class h2_connection final : public upgraded_protocol {
public:
    using clock = std::chrono::steady_clock;

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
    nghttp2_session* raw() const noexcept { return session_; }
    protocol_host& host() const noexcept { return host_; }
    const h2_peer& peer() const noexcept { return peer_; }
    const std::shared_ptr<loop_door>& loop() const noexcept { return door_; }
    /// A stream has frames to send: the connection is woken to pull them (unless it pulls
    /// anyway: inside receive or pull).
    void want_write() noexcept;
    /// Where a stream makes its response's fields (reused: nghttp2 copies them).
    response_fields<nghttp2_nv>& response_scratch() noexcept { return response_fields_; }
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

    // nghttp2's callbacks (connection.cpp).
    struct callbacks;

private:
    // What one connection may hold (connection_bounds.cpp; docs/http2.md).
    void admit();
    bool pull_frames(std::string& out, std::size_t max);
    // Gives back the request-body windows owed that the connection's bodies now allow:
    // true when it gave some (WINDOW_UPDATEs to send).
    bool settle_bodies();
    void check_send_rate(clock::time_point now);
    clock::time_point send_rate_deadline() const noexcept;

    void check_deadlines(clock::time_point now);
    void calm_down();  // GOAWAY ENHANCE_YOUR_CALM: a flood
    // A RST_STREAM went out (counted against the reset budget).
    void on_reset_sent(std::int32_t id, std::uint32_t error_code);
    void go_away(std::uint32_t error_code) noexcept;
    // The second GOAWAY of the two-step shutdown (RFC 9113 6.8), naming the last stream taken.
    void finish_shutdown() noexcept;
    void bury(std::int32_t id) noexcept;

    protocol_host& host_;
    h2_peer peer_;
    session_memory memory_;  // nghttp2's blocks, from the loop's pool: outlives session_
    nghttp2_session* session_ = nullptr;
    std::shared_ptr<loop_door> door_;
    std::weak_ptr<exchange_port> port_;
    head_limits head_limits_;
    response_fields<nghttp2_nv> response_fields_;
    // A header block whose decoded size passes this (twice the SETTINGS_MAX_HEADER_LIST_SIZE
    // sent) is cut short: its stream is reset. After a few such blocks the connection ends.
    std::size_t header_block_cut_ = 0;
    std::size_t cut_blocks_ = 0;
    flood_guard guard_;
    // The client's stream ids, and the streams the server reset lately: the last
    // 2 x h2_max_concurrent_streams (RFC 9113 5.1.1).
    stream_order order_;
    std::unordered_map<std::int32_t, std::shared_ptr<h2_stream>> streams_;
    std::vector<std::shared_ptr<h2_stream>> ready_;  // complete requests to run
    // Complete requests whose handlers wait, in order, while the connection holds its
    // bound of unsent bytes or open files (admit).
    std::vector<std::shared_ptr<h2_stream>> waiting_;
    // The connection's flow-control window holds its streams back: since when, and the
    // DATA bytes sent by then (check_send_rate).
    clock::time_point window_stalled_since_{};
    std::uint64_t window_stalled_sent_ = 0;
    std::uint64_t data_sent_ = 0;  // DATA payload bytes sent on the connection
    std::vector<std::shared_ptr<h2_stream>> graveyard_;  // closed inside a callback
    clock::time_point idle_since_;  // when the last stream closed (or the connection began)
    // When the shutdown notice (a GOAWAY naming no last stream, and a PING) went out; the
    // epoch when it has not.
    clock::time_point shutdown_notice_at_{};
    std::size_t answered_ = 0;
    body_windows_owed owed_;   // request-body windows held back (http2.max_body_memory)
    bool busy_ = false;        // inside receive or pull: no wake-up needed
    bool broken_ = false;      // nghttp2 reported a fatal error
    bool going_away_ = false;  // GOAWAY sent: the connection ends with its streams
    bool ended_ = false;       // the connection closed
};

}  // namespace tern::detail

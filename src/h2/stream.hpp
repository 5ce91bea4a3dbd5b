#pragma once
// One HTTP/2 stream: a request as its frames arrive (head, body, end), the handler run on
// it, and its response's DATA frames as the connection's writer asks for them (the stream is the
// exchange port of its request: held and deferred responses and streamed bodies go through it as
// through an HTTP/1 connection, while the other streams go on). What HTTP/3's streams do the same
// (the request's head and body, the handler, answers later) is http/stream_exchange's; this
// adds HTTP/2's framing, flow control and deadlines. Private to src/h2.

#include "h2/connection.hpp"
#include "h2/frames.hpp"
#include "h2/request_check.hpp"
#include "http/stream_exchange.hpp"

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace tern::detail {

class h2_connection;

class h2_stream final : public stream_exchange {
public:
    using clock = std::chrono::steady_clock;

    h2_stream(h2_connection& connection, std::uint32_t id, const head_limits& limits,
              std::int64_t send_window, clock::time_point now);
    h2_stream(const h2_stream&) = delete;
    h2_stream& operator=(const h2_stream&) = delete;
    ~h2_stream();

    std::uint32_t id() const noexcept { return id_; }

    // ---- the request, as the connection decodes it ----------------------------------------
    /// The rules of a well-formed request (RFC 9113 8.3), fed by the connection.
    h2::request_check& checks() noexcept { return checks_; }
    /// A field of the request's header block (trailers when `trailer`), already checked.
    void on_field(std::string_view name, std::string_view value, bool trailer) {
        add_field(name, value, trailer);
    }
    /// The header block is complete; `ended`: it carried END_STREAM (no body).
    void on_head(bool ended, clock::time_point now);
    /// Body bytes. Their window is given back now, or owed while the connection holds its
    /// budget of bodies in memory (http2.max_body_memory).
    void on_body(std::string_view data, clock::time_point now);
    /// Gives back the window the stream owes (http/body_memory.hpp); the body's idle time
    /// starts again, as the server held it back.
    void give_window() noexcept;
    /// END_STREAM after the body (or the trailers).
    void on_end() { take_end(); }
    /// This stream, shared (for the connection's queue of requests to run).
    std::shared_ptr<h2_stream> self() {
        return std::static_pointer_cast<h2_stream>(shared_from_this());
    }

    // ---- the response ---------------------------------------------------------------------
    /// What write_data did.
    enum class wrote : std::uint8_t {
        nothing,  ///< no frame: no window, or the source has nothing yet
        frame,    ///< a DATA frame, more to come
        last,     ///< the DATA frame with END_STREAM
        failed,   ///< the body failed (a file that shrank, a source aborted): reset it
    };
    /// Appends one DATA frame of at most `allowed` payload bytes (the windows and the
    /// client's frame size allow it) to `out`; `flow` is set to its payload's length.
    wrote write_data(std::string& out, std::size_t allowed, std::size_t& flow);
    /// The response's last frame (END_STREAM) went out.
    void on_response_sent() noexcept {
        response_done_ = true;
        sending_ = false;
    }
    /// The response's body (or its head, when it has none) is followed by trailers
    /// (res_.trailers): its last DATA frame does not carry END_STREAM, their HEADERS does.
    bool trails() const noexcept { return trails_; }
    /// The trailer fields to send (after `trails()` said so).
    const trailer_list& trailers() const noexcept { return res_.trailers; }
    /// The stream was reset: nothing more of its response goes out.
    void stop_sending() noexcept { sending_ = false; }
    /// Has body bytes to send now (window permitting).
    bool wants_send() const noexcept { return sending_ && !source_waits_ && !closed_; }

    // ---- flow control (RFC 9113 6.9) ---------------------------------------------------------
    /// What the client lets the stream send.
    std::int64_t send_window() const noexcept { return send_window_; }
    /// Grows (WINDOW_UPDATE, a new SETTINGS_INITIAL_WINDOW_SIZE) or shrinks the send window:
    /// false when it would pass 2^31 - 1.
    bool grow_send_window(std::int64_t by) noexcept {
        send_window_ += by;
        return send_window_ <= std::int64_t{0x7fffffff};
    }
    void sent(std::size_t n) noexcept { send_window_ -= static_cast<std::int64_t>(n); }
    /// DATA arrived costing `n` bytes of the stream's receive window: false when the client
    /// sent more than it was given.
    bool take_window(std::uint32_t n) noexcept {
        recv_window_ -= n;
        return recv_window_ >= 0;
    }
    /// `n` bytes given back: the WINDOW_UPDATE to send now, or 0 while the bytes to give are
    /// few (they are batched, as the connection's are).
    std::uint32_t give_back(std::uint64_t n) noexcept;

    /// What the stream holds for its response (docs/http2.md, "What one connection may
    /// hold"): body bytes in memory not yet framed, and whether a file body's descriptor
    /// is open.
    std::uint64_t held_bytes() const noexcept;
    bool holds_file() const noexcept { return !closed_ && holds_descriptor(); }
    /// Bytes of spool the stream's request body holds (its declared length once spooling).
    std::uint64_t spooled_bytes() const noexcept { return closed_ ? 0 : spool_reserved(); }
    /// Has body bytes to send and waits only for the client's flow-control window.
    bool wants_window() const noexcept { return sending_ && !source_waits_ && !closed_; }
    bool closed() const noexcept { return closed_; }

    /// The stream closed (both ends done, or a reset either way).
    void on_close() noexcept;
    /// The connection is gone: nothing of it may be touched any more.
    void detach() noexcept;

    // ---- deadlines and stop -----------------------------------------------------------------
    /// The next time `check` has something to do (max: nothing).
    clock::time_point next_deadline() const noexcept;
    /// Acts on deadlines passed at `now`: 408 for a stalled body, a reset for a response a
    /// client stopped taking, an SSE keep-alive for a silent stream. False when the stream's
    /// head did not complete in time (the whole connection is given up).
    bool check(clock::time_point now);
    /// The server stops: work not started is answered 503, an endless stream ends.
    void stop();

private:
    // stream_exchange
    bool live() const noexcept override { return connection_ != nullptr && !closed_; }
    std::string_view remote_ip() const noexcept override;
    void count_request() noexcept override;
    void submit() override;
    void send_continue() override;
    bool admit_spool() override;
    bool may_spool(std::uint64_t after) override;
    void give_body_credit(std::uint64_t n) override;
    void on_body_awaited() override;
    // exchange_port
    void wake() override;

    void reset(h2::frames::error_code code) noexcept;

    h2_connection* connection_;  // null once the connection is gone
    std::uint32_t id_;
    h2::request_check checks_;
    std::int64_t send_window_;
    std::int64_t recv_window_ = 65535;
    std::uint64_t to_give_ = 0;  // window given back, not yet sent
    clock::time_point begun_;
    clock::time_point last_read_;
    clock::time_point last_sent_;
    // The client's window holds the response back: since when, and the bytes sent by then
    // (the stream must send http2.min_send_progress within timeouts.write to restart the clock).
    clock::time_point stalled_since_{};
    std::uint64_t stalled_progress_ = 0;
    std::uint64_t progress_ = 0;  // body bytes framed so far

    bool response_done_ = false;
    bool closed_ = false;

    // The body being sent: from res_.body, res_.file, or a source.
    bool sending_ = false;
    std::uint64_t sent_ = 0;
    std::shared_ptr<body_source> source_;
    std::string pulled_;  // bytes pulled from the source, not yet framed
    std::size_t pulled_at_ = 0;
    bool source_ended_ = false;
    bool trails_ = false;        // trailers follow the body: END_STREAM goes on their HEADERS
    bool source_waits_ = false;  // the source had nothing: left until it wakes us
};

}  // namespace tern::detail

#pragma once
// One HTTP/2 stream: a request as its frames arrive (head, body, end), the handler run on
// it, and its response as nghttp2 asks for the DATA (the stream is the exchange port of its
// request: held and deferred responses and streamed bodies go through it as through an
// HTTP/1 connection, while the other streams go on). Private to src/h2.

#include "h2/connection.hpp"
#include "http/exchange_port.hpp"
#include "http/field_section.hpp"
#include "http/request.hpp"
#include "http/request_handler.hpp"
#include "http/response.hpp"

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace tern::detail {

class h2_connection;
class spooled_body;

class h2_stream final : public answer_later, public std::enable_shared_from_this<h2_stream> {
public:
    using clock = std::chrono::steady_clock;

    h2_stream(h2_connection& connection, std::int32_t id, const head_limits& limits,
              clock::time_point now);
    h2_stream(const h2_stream&) = delete;
    h2_stream& operator=(const h2_stream&) = delete;
    ~h2_stream();

    std::int32_t id() const noexcept { return id_; }

    // ---- the request, as nghttp2 reports it -------------------------------------------
    /// A field of the request's header block (trailers when `trailer`). False once the
    /// block's decoded size (RFC 9113 6.5.2: name + value + 32 per field) passes `cut`: the
    /// block is refused whatever follows, and not worth decoding further.
    bool on_field(std::string_view name, std::string_view value, bool trailer, std::size_t cut);
    /// The header block is complete; `ended`: it carried END_STREAM (no body).
    void on_head(bool ended, clock::time_point now);
    /// Body bytes.
    void on_body(std::string_view data, clock::time_point now);
    /// END_STREAM after the body (or the trailers).
    void on_end();
    /// The request has just become complete (by on_head or on_end): true once, and the
    /// connection then queues it for `run`.
    bool take_ready() noexcept { return std::exchange(ready_, false); }
    /// Runs the handler on the complete request (after nghttp2 has returned).
    void run();

    // ---- the response ---------------------------------------------------------------------
    /// nghttp2's data provider: up to `length` bytes of body into `buf`.
    long read_body(std::uint8_t* buf, std::size_t length, std::uint32_t* flags);
    /// The response's last frame (END_STREAM) went out.
    void on_response_sent() noexcept { response_done_ = true; }
    bool request_ended() const noexcept { return request_ended_; }

    /// What the stream holds for its response (docs/http2.md, "What one connection may
    /// hold"): body bytes in memory not yet framed, and whether a file body's descriptor
    /// is open.
    std::uint64_t unsent() const noexcept;
    bool holds_file() const noexcept {
        return !closed_ && (res_.file.file || spool_ || req_.spooled);
    }
    /// Bytes of spool the stream's request body holds (its declared length once spooling).
    std::uint64_t spooled_bytes() const noexcept;
    /// Has body bytes to send and waits only for the client's flow-control window.
    bool wants_window() const noexcept { return sending_ && !source_waits_ && !closed_; }
    bool closed() const noexcept { return closed_; }

    /// nghttp2 closed the stream (both ends done, or a reset either way).
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
    // answer_later / exchange_port
    resume_fn defer(withdraw_fn withdraw) override;
    std::shared_ptr<loop_door> door() override;
    void hold(std::shared_ptr<held_link> link) override;
    void finish(response&& res) override;
    void wake() override;

    long read_body_bytes(std::uint8_t* buf, std::size_t length, std::uint32_t* flags);
    void refuse(int status, std::string_view message = {});
    // Writes request body bytes to spool_; false (the stream answered 503 or 500, the file
    // closed) when a spool bound refuses them or the file cannot take them.
    bool spool(std::string_view data);
    void resume(const std::function<void()>& on_loop) noexcept;
    bool take_back(bool answer_now) noexcept;
    void submit();
    void reset(std::uint32_t error_code) noexcept;

    h2_connection* connection_;  // null once the connection is gone
    protocol_host* host_;        // the worker: outlives the stream's posted resumes
    std::shared_ptr<loop_door> door_;
    std::int32_t id_;
    request_head head_;
    request req_;
    response res_;
    clock::time_point begun_;
    clock::time_point last_read_;
    clock::time_point last_sent_;
    // The client's window holds the response back: since when, and the bytes sent by then
    // (the stream must send http2.min_send_progress within timeouts.write to restart the clock).
    clock::time_point stalled_since_{};
    std::uint64_t stalled_progress_ = 0;
    std::uint64_t progress_ = 0;  // body bytes handed to nghttp2 so far

    std::size_t block_size_ = 0;  // the decoded size of the header block in progress
    bool head_done_ = false;
    bool request_ended_ = false;
    bool ready_ = false;
    bool refused_ = false;  // answered by a refusal: further body bytes are dropped
    bool answered_ = false;
    bool response_done_ = false;
    bool closed_ = false;
    std::size_t body_limit_ = 0;
    std::uint64_t declared_ = 0;  // the request's Content-Length, 0 when it has none
    std::uint64_t body_bytes_ = 0;
    std::shared_ptr<spooled_body> spool_;

    // Deferred (a blocking handler) or held (`hold`): answered later.
    bool deferred_ = false;
    withdraw_fn withdraw_;
    std::shared_ptr<held_link> held_;

    // The body being sent: from res_.body, res_.file, or a source.
    bool sending_ = false;
    std::uint64_t sent_ = 0;
    std::shared_ptr<body_source> source_;
    std::string pulled_;  // bytes pulled from the source, not yet framed
    std::size_t pulled_at_ = 0;
    bool source_ended_ = false;
    bool source_waits_ = false;  // deferred in nghttp2 until the source wakes us
};

}  // namespace tern::detail

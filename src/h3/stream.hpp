#pragma once
// One HTTP/3 request stream: a request as nghttp3 decodes it (head, body, end), the handler
// run on it, and its response as nghttp3 asks for the body (the stream is the exchange port
// of its request, as an HTTP/2 stream is: held and deferred responses and streamed bodies go
// through it while the other streams go on). What HTTP/2's streams do the same (the
// request's head and body, the handler, answers later) is http/stream_exchange's; this adds
// HTTP/3's body reading, acknowledgements and deadlines. Private to src/h3.

#include "http/stream_exchange.hpp"

#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

namespace tern::detail {

class h3_connection;

class h3_stream final : public stream_exchange {
public:
    using clock = std::chrono::steady_clock;

    h3_stream(h3_connection& connection, std::int64_t id, const head_limits& limits,
              clock::time_point now);
    h3_stream(const h3_stream&) = delete;
    h3_stream& operator=(const h3_stream&) = delete;
    ~h3_stream();

    std::int64_t id() const noexcept { return id_; }

    // ---- the request, as nghttp3 reports it -------------------------------------------
    /// A field of the request's header section (the trailers' when `trailer`).
    void on_field(std::string_view name, std::string_view value, bool trailer) {
        add_field(name, value, trailer);
    }
    /// The header section is complete; `ended`: the request has no body.
    void on_head(bool ended);
    /// Body bytes. Their window comes back at once, or is held back while the connection
    /// holds its budget of bodies in memory (http3.max_body_memory).
    void on_body(std::string_view data);
    /// Gives back the window the stream owes (http/body_memory.hpp); the body's idle time
    /// starts again, as the server held it back.
    void give_window() noexcept;
    /// The request's end (after the body or the trailers). nghttp3 tells a head that ends
    /// the stream twice (end_headers with fin, then end_stream): the second is ignored, so
    /// the request is not handed to the handler twice.
    void on_end() { take_end(); }
    /// This stream, shared (for the connection's queue of requests to run).
    std::shared_ptr<h3_stream> self() {
        return std::static_pointer_cast<h3_stream>(shared_from_this());
    }

    // ---- the response ---------------------------------------------------------------------
    /// nghttp3's data reader: up to `count` runs of body bytes (kept until acknowledged).
    long read_body(void* vecs, std::size_t count, std::uint32_t* flags);
    /// The peer acknowledged `n` more body bytes: they are let go.
    void on_acked(std::uint64_t n);

    /// The stream is closed (both ends done, or a reset either way).
    void on_close() noexcept;
    /// The connection is gone: nothing of it may be touched any more.
    void detach() noexcept { connection_ = nullptr; }
    /// The server stops: work not started is answered 503, an endless stream ends.
    void stop();
    /// Acts on deadlines passed at `now` (docs/http3.md): a head not complete within
    /// timeouts.header or a body silent for timeouts.body_idle (408 when there is a head to
    /// answer, else the stream is cancelled), an answer of which the client acknowledges
    /// less than http3.min_send_progress bytes per timeouts.write (reset,
    /// H3_REQUEST_CANCELLED), an SSE keep-alive for a silent stream.
    void check(clock::time_point now);
    /// Its answer is under way and waits on the client (its flow control or its
    /// acknowledgements), not on the handler or a streamed body's producer.
    bool waits_on_client() const noexcept {
        return live() && answered_ && !reset_ && !(waits_for_source_ && source_);
    }
    /// Resets its answer (H3_REQUEST_CANCELLED: the connection's send rate is too low).
    void cancel_answer() noexcept;
    /// Still open (its answer under way or not begun).
    bool open() const noexcept { return !closed_; }
    bool closed() const noexcept { return closed_; }

    /// What the stream holds for its answer (docs/http3.md, "What one connection may hold"):
    /// body bytes in memory the client has not acknowledged, and whether a descriptor is
    /// open (a file body, a spooled request body).
    std::uint64_t held_bytes() const noexcept;
    bool holds_file() const noexcept { return !closed_ && holds_descriptor(); }
    /// Bytes of spool the stream's request body holds.
    std::uint64_t spooled_bytes() const noexcept { return closed_ ? 0 : spool_reserved(); }
    /// Sends the interim 100 Continue its request asked for (after nghttp3 has returned),
    /// unless it is answered or closed meanwhile.
    void submit_continue();
    /// Submits res_.trailers (a HEADERS frame after the body, which ends the stream).
    void submit_trailers();
    /// The client reset the stream or asked it to stop sending: a streamed body's reader
    /// hears client_left.
    void on_peer_reset() noexcept;
    /// Rejects the stream unprocessed (H3_REQUEST_REJECTED both ways: the client may retry).
    void reject() noexcept;

private:
    // stream_exchange
    bool live() const noexcept override { return connection_ != nullptr && !closed_; }
    std::string_view remote_ip() const noexcept override;
    void count_request() noexcept override;
    void submit() override;
    void after_refusal() override;
    bool admit_spool() override;
    void send_continue() override;
    bool may_spool(std::uint64_t after) override;
    void give_body_credit(std::uint64_t n) override;
    void on_body_awaited() override;
    void send_continue_now() override;
    // exchange_port
    void wake() override;

    // Resets the sending side (H3_INTERNAL_ERROR, or `code`), once.
    void reset() noexcept;
    void reset(std::uint64_t code) noexcept;
    void resume_body() noexcept;

    // Body bytes handed to nghttp3 and not yet acknowledged are held at most this much
    // (a file or a streamed body): the peer's acknowledgements pace the reading.
    static constexpr std::uint64_t max_unacked = 256 * 1024;
    static constexpr std::size_t piece_size = 64 * 1024;

    h3_connection* connection_;  // null once the connection is gone
    std::int64_t id_;
    bool closed_ = false;
    bool reset_ = false;  // its sending side was reset

    // The body being sent: res_.body whole, or pieces of res_.file or of a source, each kept
    // until the peer acknowledged it.
    bool body_given_ = false;
    std::uint64_t sent_ = 0;  // file bytes read so far
    std::deque<std::string> pieces_;
    std::uint64_t unacked_ = 0;
    std::uint64_t acked_in_front_ = 0;  // bytes of pieces_.front() acknowledged
    std::uint64_t body_acked_ = 0;      // of a body in memory
    std::uint64_t acked_ = 0;           // body bytes acknowledged in all
    bool waits_ = false;                // nghttp3 was told WOULDBLOCK: resume when ready
    bool waits_for_source_ = false;     // ... because the source had nothing
    clock::time_point begun_, last_read_, last_sent_;
    // The send rate's window: from `window_start_` (the answer's submission, or its last
    // step of http3.min_send_progress bytes) with `window_acked_` acknowledged then.
    clock::time_point window_start_;
    std::uint64_t window_acked_ = 0;
    std::shared_ptr<body_source> source_;
    bool source_ended_ = false;
    bool trails_ = false;  // trailers follow the body: its end does not end the stream
};

}  // namespace tern::detail

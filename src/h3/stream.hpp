#pragma once
// One HTTP/3 request stream: a request as nghttp3 decodes it (head, body, end), the handler
// run on it, and its response as nghttp3 asks for the body (the stream is the exchange port
// of its request, as an HTTP/2 stream is: held and deferred responses and streamed bodies go
// through it while the other streams go on). Private to src/h3.

#include "http/exchange_port.hpp"
#include "http/field_section.hpp"
#include "http/request.hpp"
#include "http/request_handler.hpp"
#include "http/response.hpp"

#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

namespace tern::detail {

class h3_connection;
class protocol_host;
class spooled_body;

class h3_stream final : public answer_later, public std::enable_shared_from_this<h3_stream> {
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
    void on_field(std::string_view name, std::string_view value, bool trailer);
    /// The header section is complete; `ended`: the request has no body.
    void on_head(bool ended);
    /// Body bytes.
    void on_body(std::string_view data);
    /// The request's end (after the body or the trailers).
    void on_end();
    /// The request has just become complete: true once; the connection then runs it.
    bool take_ready() noexcept { return std::exchange(ready_, false); }
    /// Runs the handler on the complete request (after nghttp3 has returned).
    void run();

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
    /// answer, else the stream is cancelled), an answer the client acknowledges nothing of
    /// for timeouts.write (reset), an SSE keep-alive for a silent stream.
    void check(clock::time_point now);
    /// Still open (its answer under way or not begun).
    bool open() const noexcept { return !closed_; }

private:
    // answer_later / exchange_port
    resume_fn defer(withdraw_fn withdraw) override;
    std::shared_ptr<loop_door> door() override;
    void hold(std::shared_ptr<held_link> link) override;
    void finish(response&& res) override;
    void wake() override;

    void refuse(int status, std::string_view message = {});
    // Writes request body bytes to spool_; false (the stream answered 503 or 500, the file
    // closed) when the server's spool bound refuses them or the file cannot take them.
    bool spool(std::string_view data);
    void submit();
    void reset() noexcept;
    void resume(const std::function<void()>& on_loop) noexcept;
    bool take_back(bool answer_now) noexcept;
    void resume_body() noexcept;
    bool live() const noexcept { return connection_ != nullptr && !closed_; }

    // Body bytes handed to nghttp3 and not yet acknowledged are held at most this much
    // (a file or a streamed body): the peer's acknowledgements pace the reading.
    static constexpr std::uint64_t max_unacked = 256 * 1024;
    static constexpr std::size_t piece_size = 64 * 1024;

    h3_connection* connection_;  // null once the connection is gone
    protocol_host* host_;        // the worker: outlives the stream's posted resumes
    std::shared_ptr<loop_door> door_;
    std::int64_t id_;
    request_head head_;
    request req_;
    response res_;

    bool head_done_ = false;
    bool request_ended_ = false;
    bool ready_ = false;
    bool refused_ = false;  // answered by a refusal: further body bytes are dropped
    bool answered_ = false;
    bool closed_ = false;
    bool reset_ = false;  // its sending side was reset
    std::size_t body_limit_ = 0;
    std::uint64_t body_bytes_ = 0;
    std::shared_ptr<spooled_body> spool_;

    // Deferred (a blocking handler) or held (`hold`): answered later.
    bool deferred_ = false;
    withdraw_fn withdraw_;
    std::shared_ptr<held_link> held_;

    // The body being sent: res_.body whole, or pieces of res_.file or of a source, each kept
    // until the peer acknowledged it.
    bool body_given_ = false;
    std::uint64_t sent_ = 0;  // file bytes read so far
    std::deque<std::string> pieces_;
    std::uint64_t unacked_ = 0;
    std::uint64_t acked_in_front_ = 0;  // bytes of pieces_.front() acknowledged
    bool waits_ = false;                // nghttp3 was told WOULDBLOCK: resume when ready
    bool waits_for_source_ = false;     // ... because the source had nothing
    clock::time_point begun_, last_read_, last_ack_, last_sent_;
    std::shared_ptr<body_source> source_;
    bool source_ended_ = false;
};

}  // namespace tern::detail

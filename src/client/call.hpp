#pragma once
// One call of tern::client: the request written, the response read, on a connection taken
// from the pool or opened for it, with a retry on a fresh connection when a reused one turns
// out to be closed, and redirects when asked for. A state machine that never waits: `step`
// goes as far as the sockets allow and says what to wait for; a driver does the waiting (the
// handler's event loop, or poll(2) on a blocking thread: src/client/client.cpp).

#include "client/pool.hpp"
#include "client/upstream.hpp"
#include "client/url.hpp"
#include "http/file_handle.hpp"
#include "http/response_parser.hpp"

#include <tern/client.hpp>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <system_error>
#include <vector>

namespace tern::detail {

/// A call paused by client_request::pace, and the resume the application holds; or waiting
/// for the next piece of client_request::body_stream, and the reader's callback.
struct pause_gate {
    std::mutex mutex;
    std::condition_variable ready;
    bool resumed = false;
    bool dropped = false;        // the resume went uncalled
    std::function<void()> wake;  // a loop driver's next step
    /// The resume was called (`dropped` false) or let go of uncalled.
    void fire(bool was_dropped);
};

/// What the reader's callback of body_stream leaves for its call: the piece, framed.
struct stream_feed {
    bool chunked = false;
    bool first_chunk = true;  // no chunk went yet (none to close before the next)
    std::string frame;        // the piece as it goes on the wire (a chunk's size line, CRLF)
    std::uint64_t size = 0;   // the piece's bytes
    bool ended = false;
    std::error_code failure;
};

class client_call {
public:
    using clock = std::chrono::steady_clock;

    /// What the driver waits for before the next step: `fd` readable (writable), at most
    /// `timeout` (zero: no bound). `fd` -1: paused by `pace` until its resume fires, which
    /// runs `gate()->wake` (loop drivers) or notifies `gate()->ready` (fetch_blocking).
    struct wait_for {
        platform::native_socket fd = platform::invalid_socket;
        bool write = false;
        std::chrono::nanoseconds timeout{};
    };

    /// A call of `request`; `max_body` bounds the response body (client::relay's own bound;
    /// by default the client's max_response_body).
    client_call(const std::shared_ptr<client_shared>& shared, client_request request);
    client_call(std::shared_ptr<client_shared> shared, client_request request,
                std::uint64_t max_body);
    client_call(const client_call&) = delete;
    client_call& operator=(const client_call&) = delete;

    /// Goes on: true when the call has ended (see `result`), else `next` is set.
    bool step(wait_for& next);
    /// The wait asked for by the last step timed out.
    void timed_out();
    /// The caller gave up (the handler's client left).
    void cancel();
    /// Whether the call has ended (`result` is its outcome).
    bool ended() const noexcept { return phase_ == phase::done; }
    /// The gate of a paused call (after a step that returned fd -1): paused by `pace`, or
    /// waiting for the next piece of `body_stream`.
    const std::shared_ptr<pause_gate>& gate() const noexcept { return gate_; }

    client_result result;

private:
    enum class phase { start, connect, handshake, send, receive, done };

    void begin();
    bool open_body_file();
    void open_connection();
    bool try_next_address();
    bool connecting(wait_for& next);
    bool handshaking(wait_for& next);
    bool sending(wait_for& next);
    bool receiving(wait_for& next);
    bool fill_from_file();
    bool fill_from_stream(wait_for& next);
    void ask_piece();
    void take_piece();
    bool on_bytes(std::size_t n);
    void take_head();
    bool take_body();
    void ask_pace();
    void finish_response(bool reusable);
    bool follow_redirect();
    bool retry_on_fresh();
    bool wait(wait_for& next, upstream::status what, clock::time_point deadline);
    void fail(client_failure why, std::string message);
    void drop_connection() noexcept;
    clock::time_point bound(std::chrono::milliseconds phase_timeout) const;

    std::shared_ptr<client_shared> shared_;
    client_request request_;
    url_parts url_;
    phase phase_ = phase::start;
    std::unique_ptr<upstream> conn_;
    bool reused_ = false;
    bool retried_ = false;
    int redirects_ = 0;
    std::vector<resolved_address> addresses_;
    std::size_t next_address_ = 0;
    std::string connect_error_;

    std::string out_;  // what is still to send of the head (and a string body)
    std::size_t out_at_ = 0;
    file_handle body_file_;  // body_file, opened
    int body_fd_ = -1;       // what is read: body_file_'s, or the request's body_fd
    std::uint64_t file_left_ = 0;
    std::uint64_t file_at_ = 0;
    std::uint64_t file_size_ = 0;

    // body_stream: the piece asked for, framed for the wire by the reader's callback.
    std::shared_ptr<stream_feed> feed_;
    bool stream_ended_ = false;       // the reader gave its end (and the last frame is out_)
    std::uint64_t stream_taken_ = 0;  // body bytes taken from the reader (no retry past one)

    response_parser parser_;
    std::string in_;         // the read buffer
    bool got_byte_ = false;  // a byte of this response has arrived (no retry past it)
    bool final_head_ = false;
    int interim_heads_ = 0;
    std::shared_ptr<pause_gate> gate_;  // set while paused by pace
    bool discarding_ = false;           // a redirect's body, which is followed

    clock::time_point started_;
    clock::time_point total_deadline_ = clock::time_point::max();
    clock::time_point deadline_ = clock::time_point::max();  // the phase's
    const char* phase_name_ = "connect";
};

/// Runs `call` on `reply`'s loop (each wait a readiness wait of the deferred response), then
/// `done` there (src/client/client.cpp).
void run_on_loop(const std::shared_ptr<client_call>& call, const deferred& reply,
                 std::function<void()> done);

}  // namespace tern::detail

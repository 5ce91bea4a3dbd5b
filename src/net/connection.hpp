#pragma once
// One client connection: read → parse → answer → write, with a single deadline that follows
// the connection's phase (header deadline, body idle, keep-alive idle, write, linger).

#include "http/exchange_port.hpp"
#include "http/file_handle.hpp"
#include "http/parser.hpp"
#include "http/request_handler.hpp"
#include "http/response.hpp"
#include "net/socket_poller.hpp"
#include "tls/session.hpp"

#include <asio/ip/tcp.hpp>
#include <asio/steady_timer.hpp>

#include <sys/types.h>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

namespace tern::detail {

class worker;

/// A connection owned by the completion handlers that hold it (shared_ptr) and listed by
/// its worker for stop and limits. It never leaves its worker's thread; only while a request
/// is deferred (answer_later) does another thread use that request and its response, and
/// the connection touches neither until the request resumes. A held response (`hold`) and a
/// streamed body (`response::source`) reach it only through its worker's door, on its
/// thread (docs/architecture.md, "Responses that outlive the handler").
class connection final : public std::enable_shared_from_this<connection>,
                         private answer_later,
                         private poll_target {
public:
    using clock = std::chrono::steady_clock;

    /// Takes the socket out of asio's hands into the worker's poller (net/socket_poller.hpp).
    connection(asio::ip::tcp::socket socket, worker& owner);
    ~connection();
    connection(const connection&) = delete;
    connection& operator=(const connection&) = delete;

    /// Starts serving requests: over TLS with `tls` (null for plain HTTP); with a
    /// `redirect_port`, every request is answered with a redirect to HTTPS on that port.
    void start(const std::shared_ptr<const tls_context>& tls, std::uint16_t redirect_port);
    /// Answers 503 (over max_concurrent_connections) and closes; serves no request.
    void reject();
    /// Server stop: closes the connection now if it is between requests; otherwise lets the
    /// current request finish and answers it with `Connection: close`.
    void stop_when_idle();
    /// The server has begun to stop (before its grace period): an upgraded protocol may
    /// warn its peer (HTTP/2's shutdown notice).
    void begin_closing();
    /// Closes the socket now; pending operations end.
    void close() noexcept;

private:
    // waiting: a request was deferred (a blocking handler runs elsewhere, or the response
    // is held); nothing is read or answered until it resumes. streaming: a streamed body's
    // source has nothing to send now; wake() or the idle deadline goes on.
    // handshaking: TLS, before the first request (connection_tls.cpp).
    enum class phase { handshaking, reading, writing, waiting, streaming, lingering, closed };
    enum class deadline_kind { none, idle, header, body, write, linger, stream_idle, handshake };

    // How long a stop waits for the first request of a connection accepted just before it.
    static constexpr std::chrono::milliseconds first_request_wait_at_stop{500};
    void read();
    // Readiness (net/socket_poller.hpp): `fn` runs, in a handler of its own and never inside this
    // call, once the socket is readable (bytes, the peer's end or an error) or writable
    // (room, or an error). Two waiters per direction at most (a TLS write may wait for
    // bytes while a read does); close() and cancel_ready() drop them.
    // Whoever finds the socket empty (or full) says so (can_read_, can_write_) before
    // waiting: the poller tells only of changes.
    enum class ready { read, write };
    using ready_fn = void (connection::*)();
    struct waiters {
        ready_fn first = nullptr;
        ready_fn second = nullptr;
        bool empty() const noexcept { return first == nullptr && second == nullptr; }
        void add(ready_fn fn) noexcept;
        // Runs them once (`fn`s added meanwhile wait for the next change); the second only
        // if the first left the connection open.
        void run(connection& c);
    };
    void when_ready(ready what, ready_fn fn);
    void cancel_ready(ready what) noexcept;
    void on_ready(bool readable, bool writable, bool ended) override;
    void run_ready();
    // Reads into the worker's read buffer; what of it is not consumed by the time the
    // handler returns is kept in spill_ (keep_unparsed).
    void read_now();
    void stop_reading() noexcept;
    void keep_unparsed();
    // Bytes of a next request have arrived (buffered, or unread in the socket).
    bool request_waiting() noexcept;
    // The PROXY protocol header first (connection_proxy.cpp), then TLS or HTTP.
    void read_proxy_header(std::shared_ptr<const tls_context> tls);
    void on_proxy_bytes();
    // TLS (connection_tls.cpp): the handshake, then reads and writes through the session.
    void start_handshake(const std::shared_ptr<const tls_context>& context);
    void hello_arrived();
    void continue_handshake();
    void end_handshake(bool completed, const char* failure) noexcept;
    void refuse_plain_http();
    void tls_read();
    void mark_transport(request& req) const;
    void redirect_to_https(const request& req);
    void tls_write_some();
    ssize_t tls_send_file_chunk(std::size_t n);
    // Waits for the readiness a TLS call that could not go on asked for (the socket was
    // found empty or full), then runs `fn`.
    void tls_wait(tls_session::status want, ready_fn fn);
    void on_read(std::error_code ec, std::size_t n);
    void process(std::size_t n);
    void consume_input();
    void answer(request& req);
    void finish_answer(request& req);
    // The answered request is done with: the parser takes the next one, or gives its head
    // buffers back after a 101.
    void end_request() noexcept;
    resume_fn defer(withdraw_fn withdraw) override;
    // exchange_port (through answer_later)
    std::shared_ptr<loop_door> door() override;
    void hold(std::shared_ptr<held_link> link) override;
    void finish(response&& res) override;
    void wake() override;
    // The streamed body (connection_stream.cpp).
    void start_stream(bool chunked);
    void pull_stream();
    void end_stream() noexcept;
    void wait_for_stream();
    // After a 101: the upgraded protocol (connection_upgrade.cpp).
    void start_upgrade();
    // HTTP/2 (connection_h2.cpp): after ALPN h2, or a plain connection's preface.
    bool h2_preface_arrived() const noexcept;
    void start_h2();
    void on_upgraded_read(std::error_code ec, std::size_t n);
    void resume(std::function<void()> on_connection) noexcept;
    void wait_for_resume();
    bool take_back(bool answer_now) noexcept;
    void watch_for_departure();
    void wait_for_departure();
    void departure_ready();
    void stop_watching() noexcept;
    bool watch_applies() const noexcept;
    void fail(std::error_code why);
    void write();
    void write_some();
    void on_write(std::error_code ec);
    void file_ready();
    bool append_file(const file_body& f);
    void send_file();
    ssize_t send_file_chunk(std::size_t n);
    // Reads the next piece of the pending file (at most n bytes, 64 KiB) into the worker's
    // file buffer: its size, or -1 with errno (EIO when the file ended early).
    ssize_t read_file_piece(std::size_t n);
    void after_write();
    void linger();
    void set_read_deadline();
    void set_deadline(clock::duration after, deadline_kind kind);
    void set_deadline_at(clock::time_point when, deadline_kind kind);
    void on_timer(std::error_code ec);
    void on_deadline();

    file_handle socket_;  // the client's socket, non-blocking, watched by the worker's poller
    asio::steady_timer timer_;
    worker& owner_;
    request_parser parser_;
    response response_;
    std::string remote_ip_;
    std::string out_;          // responses waiting for the next write, in request order
    std::size_t written_ = 0;  // bytes of out_ already written
    std::chrono::milliseconds write_timeout_;
    // Bytes read and not parsed yet (waiting behind a file, a deferred request, a large
    // batch): a view of the worker's read buffer while the read's handler runs, of spill_
    // after it.
    std::string_view input_;
    std::string spill_;
    file_body pending_file_;  // a file body to send after out_
    bool sendfile_unsupported_ = false;
    // HTTPS: the connection's TLS session (null on plain HTTP). The handshake holds one of
    // the worker's handshake slots until it ends; the last TLS write that could not go on
    // said which readiness it waits for.
    std::unique_ptr<tls_session> tls_;
    bool handshake_counted_ = false;
    bool handshake_heard_ = false;
    tls_session::status tls_write_wants_ = tls_session::status::want_write;
    std::string client_subject_;       // of a verified client certificate (mutual TLS)
    std::uint16_t redirect_port_ = 0;  // the plain listener's redirect to HTTPS (0: none)
    clock::time_point accepted_at_{};
    // config::proxy_protocol: the header's bytes so far, and the TLS context to start with
    // once it is read.
    std::string proxy_bytes_;
    std::shared_ptr<const tls_context> proxy_tls_;

    phase phase_ = phase::reading;
    bool reading_ = false;  // a read is outstanding
    // Readiness: the socket is in the poller's set; what it is known to have (bytes, room,
    // the peer's end) since it was last found empty or full; the waiters; and the
    // connection's owner while one waits (the poller knows it by a plain pointer).
    bool polled_ = false;
    bool can_read_ = false;
    bool can_write_ = true;
    bool ended_ = false;
    waiters on_readable_;
    waiters on_writable_;
    std::shared_ptr<connection> ready_hold_;
    bool close_after_write_ = false;
    bool deferred_ = false;  // the request being answered was deferred (answer_later)
    // A resume that arrived while earlier responses were still being written: after_write
    // runs it.
    std::function<void()> parked_resume_;
    // Takes the deferred request's work back while it has not started (answer_later).
    withdraw_fn withdraw_;
    // While a request waits, a wait for readability tells whether the client left.
    bool watching_ = false;
    // A held response (hold): told when the request can no longer be answered.
    std::shared_ptr<held_link> held_;
    // The streamed body being sent, and how: chunks (HTTP/1.1) or up to the close.
    std::shared_ptr<body_source> stream_;
    bool stream_chunked_ = false;
    // After a 101 (WebSocket): the protocol that takes what is read and is pulled for what
    // is sent (it is also stream_, unchunked). Reads go on while it writes.
    std::shared_ptr<upgraded_protocol> upgrade_;
    std::size_t served_ = 0;
    clock::time_point head_started_{};

    // One timer serves every phase: the logical deadline lives here, and the timer is only
    // re-armed when the deadline moves earlier (or when it fires before the deadline).
    clock::time_point deadline_ = clock::time_point::max();
    deadline_kind deadline_kind_ = deadline_kind::none;
    clock::time_point timer_at_ = clock::time_point::max();
    bool timer_armed_ = false;
};

}  // namespace tern::detail

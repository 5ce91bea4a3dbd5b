#pragma once
// One client connection's HTTP/1: read → parse → answer → write, with a single deadline
// that follows the connection's phase (header deadline, body idle, keep-alive idle, write,
// linger), over its byte transport (net/transport.hpp: the socket, TLS, the PROXY header).
// After an upgrade (WebSocket's 101, HTTP/2 by ALPN or preface) it carries that protocol.

#include "http/exchange_port.hpp"
#include "http/parser.hpp"
#include "http/request_handler.hpp"
#include "http/response.hpp"
#include "net/transport.hpp"

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
                         private transport_user {
public:
    using clock = std::chrono::steady_clock;

    /// Takes the socket out of asio's hands into the worker's poller (net/transport.hpp).
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
    // opening: the transport reads the PROXY header or does the TLS handshake.
    enum class phase { opening, reading, writing, waiting, streaming, lingering, closed };

    // How long a stop waits for the first request of a connection accepted just before it.
    static constexpr std::chrono::milliseconds first_request_wait_at_stop{500};

    // transport_user
    std::shared_ptr<void> keep_alive() override { return shared_from_this(); }
    void on_open(std::string_view alpn) override;
    void on_open_failed(bool plain_http) override;
    void on_read(std::error_code ec, std::size_t n) override;
    void on_written(std::error_code ec) override;
    void on_readable() override;
    void on_deadline(deadline_kind kind) override;

    void read();
    // What of the read buffer is not consumed by the time the read's handler returns is
    // kept in spill_.
    void keep_unparsed();
    // Bytes of a next request have arrived (buffered, or unread in the socket).
    bool request_waiting() noexcept;
    void refuse_plain_http();
    void mark_transport(request& req) const;
    void redirect_to_https(const request& req);
    void read_input(std::error_code ec, std::size_t n);
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
    void stop_watching() noexcept;
    bool watch_applies() const noexcept;
    void fail(std::error_code why);
    void write();
    bool append_file(const file_body& f);
    void after_write();
    void linger();
    void set_read_deadline();

    worker& owner_;
    transport io_;
    std::string& out_;  // io_'s: responses waiting for the next write, in request order
    request_parser parser_;
    response response_;
    // Bytes read and not parsed yet (waiting behind a file, a deferred request, a large
    // batch): a view of the worker's read buffer while the read's handler runs, of spill_
    // after it.
    std::string_view input_;
    std::string spill_;
    std::uint16_t redirect_port_ = 0;  // the plain listener's redirect to HTTPS (0: none)
    // The first read after the transport opened decides between HTTP/1 and HTTP/2's preface
    // (h2c with prior knowledge); later reads are HTTP/1's without asking.
    bool first_read_ = false;

    phase phase_ = phase::opening;
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
    // After a 101 (WebSocket) or for HTTP/2: the protocol that takes what is read and is
    // pulled for what is sent (it is also stream_, unchunked). Reads go on while it writes.
    std::shared_ptr<upgraded_protocol> upgrade_;
    std::size_t served_ = 0;
    std::chrono::steady_clock::time_point head_started_{};
};

}  // namespace tern::detail

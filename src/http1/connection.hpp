#pragma once
// One client connection's HTTP/1: read → parse → answer → write, with a single deadline
// that follows the connection's phase (header deadline, body idle, keep-alive idle, write,
// linger), over its byte transport (http/byte_transport.hpp: the socket, TLS, the PROXY
// header are the transport's, src/net/transport.cpp).

#include "http/byte_transport.hpp"
#include "http/error.hpp"
#include "http/exchange_port.hpp"
#include "http/parser.hpp"
#include "http/protocol_host.hpp"
#include "http/request_handler.hpp"
#include "http/response.hpp"

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace tern::detail {

/// HTTP/1 over one connection's byte transport. Owned by its transport (until it closes or
/// is handed over) and by the completion handlers that hold it. It never leaves its worker's
/// thread; only while a request is deferred (answer_later) does another thread use that
/// request and its response, and the connection touches neither until the request resumes.
/// A held response (`hold`) and a streamed body (`response::source`) reach it only through
/// its loop's door, on its thread (docs/architecture.md, "Responses that outlive the
/// handler"). After a 101 or the h2c preface it hands the transport to an
/// upgraded_connection (upgraded.hpp) and hears nothing more.
class http1_connection final : public std::enable_shared_from_this<http1_connection>,
                               public transport_user,
                               private answer_later,
                               private body_port {
public:
    using clock = std::chrono::steady_clock;

    /// Serves requests on `io` (with `redirect_port`, every request is answered with a
    /// redirect to HTTPS on that port), or answers the refusal `mode` says and closes.
    http1_connection(std::shared_ptr<byte_transport> io, protocol_host& host, opening::mode mode,
                     std::uint16_t redirect_port);
    ~http1_connection() override;
    http1_connection(const http1_connection&) = delete;
    http1_connection& operator=(const http1_connection&) = delete;

    // transport_user
    void start() override;
    void on_read(std::error_code ec, std::size_t n) override;
    void on_written(std::error_code ec) override;
    void on_readable() override;
    void on_deadline(deadline_kind kind) override;
    /// Server stop: closes the connection now if it is between requests; otherwise lets the
    /// current request finish and answers it with `Connection: close`.
    void stop_when_idle() override;
    void on_close() noexcept override;

private:
    // waiting: a request was deferred (a blocking handler runs elsewhere, or the response
    // is held); nothing is read or answered until it resumes. body_streaming: a streamed
    // request body (tern::streamed_body) is read as its handler asks, and only then. streaming: a
    // streamed body's source has nothing to send now; wake() or the idle deadline goes on.
    // handed_over: the transport carries another protocol now (a 101, the h2c preface).
    enum class phase {
        reading,
        writing,
        waiting,
        body_streaming,
        streaming,
        lingering,
        handed_over,
        closed
    };
    // A streamed request body: read as its handler asks; or, after the handler answered
    // before its end, the small remainder read and discarded to keep the connection.
    enum class body_stage { none, streaming, draining };

    // How long a stop waits for the first request of a connection accepted just before it.
    static constexpr std::chrono::milliseconds first_request_wait_at_stop{500};

    void close() noexcept { io_->close(); }
    void reject();
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
    // The streamed request body (connection_body.cpp).
    void ask(std::shared_ptr<body_sink> sink) override;
    void start_body(request& req);
    void pump_body();
    void read_body();
    // The reading ended before the body's end: the sink hears `reason`; `answer` (none: the
    // connection closes) is what tern answers in place of the handler.
    void body_failed(body_stop reason, error answer);
    void settle_body() noexcept;
    void end_body_stream() noexcept;
    // The transport to another protocol (upgraded.cpp): after a 101, or the h2c preface.
    void start_upgrade();
    bool h2_preface_arrived() const noexcept;
    void start_h2();
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

    protocol_host& host_;
    std::shared_ptr<byte_transport> io_;
    std::string& out_;  // io_'s: responses waiting for the next write, in request order
    opening::mode mode_;
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

    phase phase_ = phase::reading;
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
    // The streamed response's trailers (ctx.trailer), sent in its last chunk with the
    // source's own; HTTP/1.1 only.
    trailer_list stream_trailers_;
    // The streamed request body: where it is, who asked for its next piece, whether its
    // end was parsed, how its reading failed (none: it did not).
    body_stage body_ = body_stage::none;
    std::shared_ptr<body_sink> body_sink_;
    bool body_ended_ = false;
    bool body_reading_ = false;
    bool pumping_ = false;
    bool pump_posted_ = false;
    std::optional<body_stop> body_failure_;
    // The body's reads go to this buffer, so that a piece stays valid while its handler
    // holds it (the loop's buffer is the next read's, whichever connection it is for).
    std::unique_ptr<char[]> body_buffer_;
    std::span<char> loop_buffer_;
    std::size_t served_ = 0;
    std::chrono::steady_clock::time_point head_started_{};
};

}  // namespace tern::detail

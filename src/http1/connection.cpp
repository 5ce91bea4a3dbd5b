#include "http1/connection.hpp"

#include "http/buffers.hpp"
#include "http/error.hpp"
#include "http/status.hpp"
#include "http/writer.hpp"

#include <tern/config.hpp>
#include "http/protocol_host.hpp"

#include "platform/files.hpp"

#include <algorithm>
#include <cerrno>
#include <functional>
#include <utility>

namespace tern::detail {

namespace {

// How long a refused connection (over the connection cap) may stall its 503.
constexpr std::chrono::milliseconds reject_write_timeout(2000);
// File bodies up to this size are read into the output buffer and go out with the headers
// (and with the other responses of a pipelined batch) in one send; larger ones are streamed
// with sendfile(2) after the headers.
constexpr std::uint64_t inline_file_bytes = std::uint64_t{16} * 1024;
// Responses to pipelined requests are written once they pass this size; the requests still
// in the read buffer are parsed after the write. The output buffer then stays near the size
// it keeps between requests (retained_buffer_capacity).
constexpr std::size_t batch_budget_bytes = retained_buffer_capacity;

}  // namespace

http1_connection::http1_connection(std::shared_ptr<byte_transport> io, protocol_host& host,
                                   opening::mode mode, std::uint16_t redirect_port)
    : host_(host),
      io_(std::move(io)),
      out_(io_->out()),
      mode_(mode),
      parser_(host.limits()),
      redirect_port_(redirect_port) {}

http1_connection::~http1_connection() = default;

void http1_connection::start() {
    switch (mode_) {
        case opening::mode::serve:
            first_read_ = true;
            read();
            return;
        case opening::mode::refuse_busy:
            reject();
            return;
        case opening::mode::refuse_plain_http:
            refuse_plain_http();
            return;
    }
}

void http1_connection::reject() {
    write_error_response(out_, 503, "Retry-After: 1\r\n");
    close_after_write_ = true;
    io_->shorten_write_timeout(reject_write_timeout);
    write();
}

void http1_connection::stop_when_idle() {
    // Between requests, a connection whose next request has already arrived (unread in the
    // socket) is not idle: closing it would lose a request the client has sent (a proxy
    // cannot retry a POST). It is read and answered with Connection: close. So is a
    // connection just opened, whose first request is on its way: it gets a short wait.
    if (phase_ == phase::reading && !parser_.in_progress() && !request_waiting()) {
        if (served_ != 0 || io_->secure()) {
            close();
        } else {
            io_->set_deadline(std::min<clock::duration>(host_.settings().timeouts.first_byte,
                                                        first_request_wait_at_stop),
                              deadline_kind::idle);
        }
    }
    // A request waiting for a blocking handler that has not started is answered now (503);
    // one whose handler runs is answered when it returns.
    if (phase_ == phase::waiting) take_back(true);
    // An endless stream (SSE) ends now; its clients reconnect elsewhere. Another stream runs
    // on until the drain deadline, like any request in progress.
    if (stream_ && stream_->end_on_stop() && phase_ == phase::streaming) pull_stream();
    // Otherwise the request in progress is answered with Connection: close (answer() sees
    // the worker stopping) and the connection closes after that write.
}

// What a request learns of its transport: HTTPS, and a client certificate's subject.
void http1_connection::mark_transport(request& req) const {
    req.secure = io_->secure();
    if (!io_->client_subject().empty()) req.client_subject.assign(io_->client_subject());
}

bool http1_connection::request_waiting() noexcept { return !input_.empty() || io_->peek() > 0; }

void http1_connection::on_close() noexcept {
    if (phase_ == phase::closed) return;
    phase_ = phase::closed;
    // Work not started for a request that can no longer be answered never runs. Taken back
    // before the socket closes, so that it is gone once the client sees the close.
    take_back(false);
    // A streamed request body's reader hears that the reading ended: the server's stop
    // (its grace period is over) or the client's departure.
    if (body_ == body_stage::streaming) {
        const auto why = host_.stopping() ? body_stop::stopped : body_stop::client_left;
        body_failure_ = why;
        // Told now, not posted: at the stop's end the loop runs no more posted work.
        if (auto sink = std::exchange(body_sink_, nullptr)) sink->on_failure(why);
        body_ = body_stage::none;
        end_body_stream();
    }
    // A held response or a streamed body is told that nothing more reaches the client.
    if (auto link = std::exchange(held_, nullptr)) link->abandon();
    end_stream();
}

// ---- reading -----------------------------------------------------------------------------

void http1_connection::end_request() noexcept {
    // After a 101 no HTTP follows: the head's buffers go back.
    if (phase_ == phase::handed_over) {
        parser_.release();
    } else {
        parser_.next();
    }
    if (body_buffer_) body_buffer_.reset();  // a streamed body's last piece is done with
}

void http1_connection::read() {
    if (input_.empty() && spill_.capacity() != 0) std::string().swap(spill_);
    io_->read();
}

void http1_connection::keep_unparsed() {
    if (input_.empty()) return;
    const auto buffer = io_->read_buffer();
    const std::less<const char*> before;
    if (before(input_.data(), buffer.data()) ||
        !before(input_.data(), buffer.data() + buffer.size())) {
        return;  // in spill_ already
    }
    spill_.assign(input_);
    input_ = spill_;
}

void http1_connection::on_read(std::error_code ec, std::size_t n) {
    read_input(ec, n);
    keep_unparsed();
}

void http1_connection::read_input(std::error_code ec, std::size_t n) {
    switch (phase_) {
        case phase::reading:
            if (ec) {
                close();  // the peer went away (or reset); there is nobody to answer
            } else {
                process(n);
            }
            return;
        case phase::body_streaming:
            body_reading_ = false;
            if (ec) {
                // The client left (or reset) before the body's end.
                body_failed(body_stop::client_left, error{});
            } else {
                input_ = std::string_view(io_->read_buffer().data(), n);
                pump_body();
            }
            return;
        case phase::lingering:  // the transport discards the reads while lingering
        case phase::writing:
        case phase::waiting:
        case phase::streaming:
        case phase::handed_over:
        case phase::closed:
            return;
    }
}

void http1_connection::process(std::size_t n) {
    input_ = std::string_view(io_->read_buffer().data(), n);
    if (std::exchange(first_read_, false) && h2_preface_arrived()) {
        start_h2();  // h2c with prior knowledge
        return;
    }
    consume_input();
}

void http1_connection::consume_input() {
    const auto now = clock::now();
    // A file body goes out before any later response, and responses are written once they
    // pass the batch budget (a few bytes of requests can ask for many large responses): the
    // rest of the input waits (in spill_ once this handler returns; no read happens until
    // it is consumed) and is parsed after the write. Nothing after a closing request is
    // processed.
    while (!input_.empty() && !close_after_write_ && !io_->file().file && !stream_ &&
           out_.size() <= batch_budget_bytes) {
        const bool was_idle = !parser_.in_progress();
        const auto r = parser_.feed(input_);
        input_.remove_prefix(r.consumed);
        if (was_idle && parser_.in_progress()) head_started_ = now;
        if (body_ == body_stage::draining) {
            // What is left of a streamed body whose handler answered before its end.
            if (r.what == request_parser::event::request) {
                body_ = body_stage::none;
                end_request();
            } else if (r.what == request_parser::event::error) {
                body_ = body_stage::none;
                close_after_write_ = true;
            }
            continue;
        }
        if (r.what == request_parser::event::head) {
            // A streamed body: the handler runs now, and reads the body as it asks.
            start_body(parser_.current());
            answer(parser_.current());
            if (deferred_) {
                if (!out_.empty()) {
                    write();  // the responses before it; after_write comes to the body
                } else {
                    phase_ = phase::body_streaming;
                    io_->clear_deadline();
                    pump_body();
                }
                return;
            }
            if (body_ != body_stage::draining) end_request();
            continue;
        }
        if (r.what == request_parser::event::request) {
            answer(parser_.current());
            if (deferred_) {
                // Answered later (resume()); what is left of the input waits in spill_.
                // The responses before it go out now; then nothing is read and no deadline
                // runs until it resumes.
                if (!out_.empty()) {
                    write();
                } else {
                    wait_for_resume();
                }
                return;
            }
            end_request();
            if (phase_ == phase::handed_over) return;  // a 101: the bytes left are not HTTP
        } else if (r.what == request_parser::event::error) {
            fail(parser_.error());
            break;
        }
    }
    if (!close_after_write_ && parser_.wants_continue()) {
        write_continue(out_);
        parser_.continue_sent();
    }
    if (!out_.empty() || io_->file().file || stream_) {
        write();
        return;
    }
    set_read_deadline();
    phase_ = phase::reading;
    read();
}

void http1_connection::set_read_deadline() {
    // The deadline follows the request in progress, whatever ran before this read (a
    // write of earlier responses or of 100 Continue, a deferred handler): its body's idle
    // timeout once the headers are complete, else the header deadline from its first byte.
    // Between requests the current deadline stands (keep-alive idle or first byte).
    const auto& cfg = host_.settings();
    if (parser_.reading_body()) {
        io_->set_deadline(cfg.timeouts.body_idle, deadline_kind::body);
    } else if (parser_.in_progress()) {
        io_->set_deadline_at(head_started_ + cfg.timeouts.header, deadline_kind::header);
    }
}

void http1_connection::answer(request& req) {
    ++served_;
    host_.count_request();
    deferred_ = false;
    mark_transport(req);
    if (redirect_port_ != 0) {
        redirect_to_https(req);
        finish_answer(req);
        return;
    }
    host_.handler().handle(req, response_, io_->remote_ip(), *this, host_.app_state());
    if (deferred_) return;
    if (body_ == body_stage::streaming) settle_body();
    finish_answer(req);
}

void http1_connection::finish_answer(request& req) {
    const auto limit = host_.settings().limits.max_requests_per_connection;
    const bool close = !req.keep_alive || response_.close || host_.closing_connections() ||
                       (limit != 0 && served_ >= limit);
    if (response_.upgrade && response_.status == 101) {
        start_upgrade();
        return;
    }
    framing how;
    how.omit_body = req.is_head;
    how.close = close;
    how.keep_alive_1_0 = !close && req.version_minor == 0;
    if (response_.source) {
        // A streamed body: chunks on HTTP/1.1; on HTTP/1.0 the close ends it. A HEAD, 204 or
        // 304 gets the head alone, and the source is told at once that nothing is sent.
        const bool body = !req.is_head && !status_forbids_body(response_.status);
        how.chunked = req.version_minor != 0;
        if (body && !how.chunked) {
            how.close = true;
            how.keep_alive_1_0 = false;
        }
        write_response(out_, response_, how);
        stream_ = std::move(response_.source);
        if (body && how.chunked) stream_trailers_ = std::move(response_.trailers);
        response_.clear();
        if (how.close) close_after_write_ = true;
        if (body) {
            start_stream(how.chunked);
        } else {
            end_stream();
        }
        return;
    }
    // RFC 9112 7.1.2: trailers ride in a chunked body's last chunk; HTTP/1.0 has none (a
    // recipient that did not send "TE: trailers" may discard them, RFC 9110 6.5.1). A file
    // body is sent as it is, without them.
    how.trailers = !response_.trailers.empty() && req.version_minor != 0 && !req.is_head &&
                   !response_.file.file;
    const std::size_t head_at = out_.size();
    write_response(out_, response_, how);
    if (response_.file.file && !req.is_head && response_.file.length != 0) {
        if (response_.file.length > inline_file_bytes ||
            out_.size() + response_.file.length > batch_budget_bytes) {
            io_->file() = std::move(response_.file);
        } else if (!append_file(response_.file)) {
            // The file could not be read whole (an I/O error, or it shrank since fstat): a
            // clean 500 instead of a body shorter than its Content-Length.
            out_.resize(head_at);
            write_error_response(out_, 500);
            close_after_write_ = true;
        }
    }
    response_.clear();  // frees a large body at once; closes a file sent inline or a HEAD's
    if (close) close_after_write_ = true;
}

bool http1_connection::append_file(const file_body& f) {
    const std::size_t at = out_.size();
    const auto length = static_cast<std::size_t>(f.length);
    out_.resize(at + length);
    std::size_t done = 0;
    while (done < length) {
        const ssize_t n = platform::read_file_at(f.file.get(), out_.data() + at + done,
                                                 length - done, f.offset + done);
        if (n > 0) {
            done += static_cast<std::size_t>(n);
        } else if (n < 0 && errno == EINTR) {
            continue;
        } else {
            out_.resize(at);
            return false;
        }
    }
    return true;
}

void http1_connection::fail(std::error_code why) {
    host_.count_request();
    // The application may shape the error (app.error(status)) and the request logger sees
    // it: both get what of the request was parsed (the request line once it arrived
    // whole, and the header fields complete by then).
    request& req = parser_.parsed_so_far();
    mark_transport(req);
    const auto kind = static_cast<error>(why.value());
    host_.handler().handle_failure(req, status_of(kind), failure_message(kind), response_,
                                   io_->remote_ip(), host_.app_state());
    framing how;
    how.omit_body = req.is_head;
    how.close = true;
    write_response(out_, response_, how);
    response_.clear();
    close_after_write_ = true;
}

// ---- deadlines ---------------------------------------------------------------------------

void http1_connection::on_deadline(deadline_kind kind) {
    switch (kind) {
        case deadline_kind::none:
            return;
        case deadline_kind::header:
        case deadline_kind::body:
            if (phase_ == phase::body_streaming && kind == deadline_kind::body) {
                if (body_reading_) body_failed(body_stop::idle, error::body_timeout);
                return;
            }
            if (phase_ != phase::reading) return;
            // RFC 9110 15.5.9: 408 tells the client the server gave up waiting.
            fail(kind == deadline_kind::header ? error::header_timeout : error::body_timeout);
            io_->stop_reading();  // the outstanding read
            write();
            return;
        case deadline_kind::idle:
        case deadline_kind::write:
        case deadline_kind::linger:
        case deadline_kind::handshake:
            close();
            return;
        case deadline_kind::stream_idle:
            if (phase_ != phase::streaming || !stream_) return;
            stream_->on_idle();  // e.g. an SSE keep-alive comment
            pull_stream();
            return;
    }
}

}  // namespace tern::detail

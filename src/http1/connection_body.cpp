// A streamed request body (tern::streamed_body; docs/plans/streamed-request-bodies.md): the
// handler runs once the head is complete, and each of its asks lets one piece in. Nothing is
// read from the socket while nothing is asked, so a slow handler closes TCP's window on the
// client instead of filling memory. A piece is a view of the connection's own read buffer
// (or of spill_), valid until the next ask. The handler may answer before the end: a small
// known remainder is then read and discarded (the connection stays), else the answer says
// `Connection: close` (RFC 9112 9.6).

#include "http1/connection.hpp"

#include "http/protocol_host.hpp"
#include "http/writer.hpp"

#include <tern/config.hpp>

#include <functional>
#include <utility>

namespace tern::detail {

namespace {

// Bytes of a streamed body left unread when its handler answered that are read and
// discarded to keep the connection (docs/limits.md); more, or a chunked body, closes it. A
// constant in 0.2: a field of limits_config would change 0.2's ABI.
constexpr std::uint64_t max_discarded_body = 64 * 1024;

}  // namespace

void http1_connection::start_body(request& req) {
    body_ = body_stage::streaming;
    body_ended_ = false;
    body_failure_.reset();
    // (The aliasing form: body_port is a private base.)
    req.body_stream = std::shared_ptr<body_port>(shared_from_this(), static_cast<body_port*>(this));
    // What arrived behind the head moves out of the loop's buffer now (the pieces it holds
    // are handed out later); from now on reads go to the body's own buffer.
    keep_unparsed();
    loop_buffer_ = io_->read_buffer();
    if (!body_buffer_) body_buffer_ = std::make_unique<char[]>(loop_buffer_.size());
    io_->read_into({body_buffer_.get(), loop_buffer_.size()});
}

void http1_connection::ask(std::shared_ptr<body_sink> sink) {
    if (body_ != body_stage::streaming || phase_ == phase::closed) {
        // The reading is over (it failed, or the answer went out before the body's end).
        const body_stop why = body_failure_.value_or(body_stop::client_left);
        io_->post([sink = std::move(sink), why] { sink->on_failure(why); });
        return;
    }
    body_sink_ = std::move(sink);
    if (pumping_ || pump_posted_) return;  // the pump under way (or posted) goes on with it
    pump_posted_ = true;
    io_->post([self = shared_from_this()] {
        self->pump_posted_ = false;
        self->pump_body();
    });
}

void http1_connection::pump_body() {
    if (body_ != body_stage::streaming || phase_ != phase::body_streaming || body_reading_) return;
    pumping_ = true;
    const auto self = shared_from_this();  // a piece's handler may let go of the rest
    while (body_sink_ && body_ == body_stage::streaming && phase_ == phase::body_streaming) {
        if (body_ended_) {
            const request& req = parser_.current();
            std::exchange(body_sink_, nullptr)->on_end(req.trailers, req.trailer_storage);
            continue;
        }
        // RFC 9110 10.1.1: the client that waits for 100 Continue is invited when the
        // handler first asks, not before (a handler refusing after the head never is).
        if (parser_.wants_continue()) {
            write_continue(out_);
            parser_.continue_sent();
            pumping_ = false;
            write();  // after_write comes back here
            return;
        }
        if (input_.empty()) {
            read_body();
            break;
        }
        const auto r = parser_.feed(input_);
        input_.remove_prefix(r.consumed);
        if (r.what == request_parser::event::error) {
            const auto why = static_cast<error>(parser_.error().value());
            pumping_ = false;
            body_failed(
                why == error::body_too_large ? body_stop::too_large : body_stop::client_left, why);
            return;
        }
        if (r.what == request_parser::event::request) {
            body_ended_ = true;
            end_body_stream();  // what follows is the next request's
        }
        const auto piece = parser_.piece();
        if (!piece.empty()) std::exchange(body_sink_, nullptr)->on_piece(piece);
    }
    pumping_ = false;
    if (!body_reading_ && phase_ == phase::body_streaming) io_->clear_deadline();
}

void http1_connection::read_body() {
    // The buffered bytes are used up, and with them the pieces that viewed spill_.
    if (spill_.capacity() != 0) std::string().swap(spill_);
    body_reading_ = true;
    // The idle deadline runs only while a piece is asked for: a slow consumer is not a slow
    // client.
    io_->set_deadline(host_.settings().timeouts.body_idle, deadline_kind::body);
    io_->read();
}

void http1_connection::body_failed(body_stop reason, error answer) {
    body_reading_ = false;
    body_failure_ = reason;
    if (auto sink = std::exchange(body_sink_, nullptr)) {
        // Told from a handler of its own: never inside a close or a timer.
        io_->post([sink = std::move(sink), reason] { sink->on_failure(reason); });
    }
    body_ = body_stage::none;
    end_body_stream();
    if (answer == error{}) {
        close();
        return;
    }
    // tern answers in the handler's place (413, 408): the handler's late answer is refused.
    if (auto link = std::exchange(held_, nullptr)) link->abandon();
    take_back(false);
    io_->stop_reading();
    fail(answer);
    write();
}

void http1_connection::settle_body() noexcept {
    if (body_ != body_stage::streaming) return;
    if (body_reading_) {
        io_->stop_reading();
        body_reading_ = false;
    }
    if (auto sink = std::exchange(body_sink_, nullptr)) {
        io_->post([sink = std::move(sink)] { sink->on_failure(body_stop::client_left); });
    }
    end_body_stream();
    if (body_ended_) {
        body_ = body_stage::none;
        return;
    }
    // Answered before the body's end. A client still waiting for 100 Continue may never
    // send the body; one whose remainder is unknown (chunked) or large is not waited for.
    const auto left = parser_.body_left();
    if (!parser_.wants_continue() && left >= 0 &&
        static_cast<std::uint64_t>(left) <= max_discarded_body) {
        body_ = body_stage::draining;  // consume_input reads and discards it
        return;
    }
    body_ = body_stage::none;
    response_.close = true;
}

void http1_connection::end_body_stream() noexcept {
    if (loop_buffer_.empty()) return;
    // Bytes after the body (a pipelined request) move out of the body's buffer, whose
    // reads end here.
    const std::less<const char*> before;
    const char* own = body_buffer_.get();
    if (!input_.empty() && !before(input_.data(), own) &&
        before(input_.data(), own + loop_buffer_.size())) {
        spill_.assign(input_);
        input_ = spill_;
    }
    io_->read_into(loop_buffer_);
    loop_buffer_ = {};
}

}  // namespace tern::detail

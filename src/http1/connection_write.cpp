// The write side of a connection: what follows a write (the next read, a resumed request, a
// streamed body's next piece, the close, the linger after an error response). The
// transport (net/transport.cpp) does the writing itself; the read side is in connection.cpp.

#include "http1/connection.hpp"

#include "http/protocol_host.hpp"

#include <tern/config.hpp>

#include <utility>

namespace tern::detail {

void http1_connection::write() {
    phase_ = phase::writing;
    io_->write();
}

void http1_connection::on_written(std::error_code ec) {
    if (phase_ == phase::closed) return;
    if (ec) {
        // The client went away, or a file shrank under us: the promised Content-Length can
        // no longer be kept, so the connection ends here.
        close();
        return;
    }
    if (stream_) {
        // The next piece of a streamed body. Posted, not called: writes complete
        // synchronously, and a producer that keeps up must not nest pull -> write -> pull.
        io_->post([self = shared_from_this()] {
            if (self->phase_ == phase::writing && self->stream_) self->pull_stream();
        });
        return;
    }
    after_write();
}

void http1_connection::after_write() {
    if (body_ == body_stage::streaming) {
        // 100 Continue, or the responses before a streamed request, are out: its body is
        // read as its handler asks (or its answer, which came meanwhile, goes out).
        phase_ = phase::body_streaming;
        io_->clear_deadline();
        if (parked_resume_) {
            resume(std::exchange(parked_resume_, nullptr));
            return;
        }
        pump_body();
        return;
    }
    if (close_after_write_) {
        linger();
        return;
    }
    if (deferred_) {
        // The responses before a deferred request are out; it is still being answered.
        wait_for_resume();
        if (parked_resume_) resume(std::exchange(parked_resume_, nullptr));
        return;
    }
    if (host_.stopping()) {
        close();  // answered everything that had arrived; the server is going away
        return;
    }
    if (!input_.empty()) {
        // Pipelined requests that waited behind a file body. Posted, not called: writes
        // complete synchronously, and a pipeline of many file requests must not nest
        // consume_input -> write -> after_write calls one inside the other.
        io_->post([self = shared_from_this()] {
            if (self->phase_ == phase::writing) self->consume_input();
        });
        return;
    }
    // A request may be in progress: one whose headers were followed by 100 Continue, or a
    // pipelined one that began in the last read. Its own deadline runs, not keep-alive.
    io_->set_deadline(host_.settings().timeouts.keep_alive, deadline_kind::idle);
    set_read_deadline();
    phase_ = phase::reading;
    read();
}

void http1_connection::linger() {
    // The client reads the last response instead of a reset (RFC 9112 9.6).
    phase_ = phase::lingering;
    io_->linger();
}

}  // namespace tern::detail

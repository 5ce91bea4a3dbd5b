// A connection whose request waits for work done elsewhere (a blocking handler): deferring
// it, watching the client meanwhile, taking the work back when the client leaves or the
// server stops, and resuming on the connection's thread.

#include "http1/connection.hpp"

#include "http/protocol_host.hpp"

#include <utility>

namespace tern::detail {

answer_later::resume_fn http1_connection::defer(withdraw_fn withdraw) {
    deferred_ = true;
    withdraw_ = std::move(withdraw);
    host_.expect_posted();
    protocol_host& host = host_;
    return [&host, self = shared_from_this()](std::function<void()> on_connection) mutable {
        // Any thread. The worker outlives its connections' deferred requests (its loop runs
        // until every expected post has come back). The reference to this connection moves
        // on to the loop, so the connection is never destroyed on the calling thread.
        host.post([self = std::move(self), fn = std::move(on_connection)]() mutable {
            self->resume(std::move(fn));
        });
    };
}

void http1_connection::wait_for_resume() {
    phase_ = phase::waiting;
    io_->clear_deadline();
    // During a stop, work that has not started is not started any more: 503 now.
    if (host_.stopping() && take_back(true)) return;
    watch_for_departure();
}

// Takes the deferred request's work back if it has not started: `answer_now` answers the
// request in its place (503, through the app's error shaping); otherwise it is dropped.
// False when there is nothing to take back or the work has started (its resume will come).
bool http1_connection::take_back(bool answer_now) noexcept {
    if (!withdraw_) return false;
    // The work holds this connection: dropping it must not end the connection inside one
    // of its own calls, so the last reference is let go on a later turn of the loop.
    auto self = weak_from_this().lock();  // the non-throwing spelling of shared_from_this
    auto instead = std::exchange(withdraw_, nullptr)();
    const bool taken = static_cast<bool>(instead);
    if (taken) {
        host_.unexpect_posted();  // its resume never comes
        if (answer_now) resume(std::move(instead));
    }
    io_->post([self = std::move(self)] {});
    return taken;
}

// Nothing is read while a request waits for its blocking handler, but a client that closes
// or resets its connection meanwhile must not keep its work queued and its connection
// counted: a peek at the socket (without taking its bytes) tells. The client's FIN may have
// come with the request, so look once before waiting for readability.
void http1_connection::watch_for_departure() {
    const int n = io_->peek();
    if (n < 0) {
        wait_for_departure();
        return;
    }
    // More bytes behind the request: the client is there (and is not watched further; the
    // bytes wait in the kernel until the request resumes).
    if (n > 0) return;
    // End of input or an error (a reset): the client has gone. A client that only shut down
    // its sending side is treated the same, as nginx does by default (docs/threading.md).
    close();
}

// A deferred request, or a streamed body (whose writes may be in progress meanwhile).
bool http1_connection::watch_applies() const noexcept {
    return phase_ == phase::waiting || (stream_ && phase_ != phase::closed);
}

void http1_connection::hold(std::shared_ptr<held_link> link) {
    // The link knows this connection by a plain pointer, valid until abandon(): close()
    // calls it before the connection can go. (What keeps the connection alive meanwhile is
    // its one timer, which stays armed until close(), as in every phase.)
    held_ = std::move(link);
    deferred_ = true;  // consume_input waits (wait_for_resume) once earlier responses are out
}

void http1_connection::finish(response&& res) {
    held_.reset();
    if (phase_ == phase::closed) return;
    // Nothing uses response_ while a request is held (the application has its own).
    response_ = std::move(res);
    resume([] {});
}

// Waits for the socket to become readable (bytes or the client's close), then looks again.
void http1_connection::wait_for_departure() {
    watching_ = true;
    io_->wait_readable();
}

void http1_connection::on_readable() {
    if (!watching_ || !watch_applies()) return;  // stale: the request resumed meanwhile
    watching_ = false;
    watch_for_departure();
}

void http1_connection::stop_watching() noexcept {
    if (!watching_) return;
    watching_ = false;
    io_->stop_reading();  // the only read waited for while a request waits is the watch
}

void http1_connection::resume(std::function<void()> on_connection) noexcept {
    withdraw_ = nullptr;  // done: there is nothing left to take back
    stop_watching();
    // Closed meanwhile (the client left, the stop's drain deadline): nobody to answer.
    if (phase_ == phase::closed) return;
    if (phase_ == phase::writing) {
        parked_resume_ = std::move(on_connection);  // after_write comes back here
        return;
    }
    deferred_ = false;
    on_connection();
    settle_body();  // a streamed body not read to its end: drained, or the connection closes
    finish_answer(parser_.current());
    if (body_ != body_stage::draining) end_request();
    if (phase_ == phase::handed_over) return;  // a 101
    phase_ = phase::writing;  // as after a write: consume_input goes on with what is left
    consume_input();
}

}  // namespace tern::detail

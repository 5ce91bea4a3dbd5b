// A request body read piece by piece on a stream of a multiplexed connection (HTTP/2,
// HTTP/3; tern::streamed_body, docs/plans/streamed-request-bodies.md). The handler runs on
// the head; each ask of its reader is answered by a posted feed with what arrived since
// the last piece (at most one stream window: the client may send no more until the piece
// handed out is let go), the end, or why the reading ended. The credit of a piece goes back
// to the client only when the reader asks again, so a reader that does not ask closes the
// client's flow-control window instead of filling memory.

#include "http/protocol_host.hpp"
#include "http/stream_exchange.hpp"

#include <utility>

namespace tern::detail {

void stream_exchange::stream_body(std::string_view data) {
    body_bytes_ += data.size();
    // A body without a length, or one longer than it said (which the protocol library
    // refuses), passing the route's limit: tern answers 413 in the handler's place.
    if (body_bytes_ > body_limit_) {
        fail_body(body_stop::too_large, 413);
        return;
    }
    arrived_.append(data);
    if (body_sink_) post_feed();
}

void stream_exchange::ask(std::shared_ptr<body_sink> sink) {
    body_sink_ = std::move(sink);
    post_feed();
}

void stream_exchange::post_feed() {
    // Never inside the ask, nor inside the protocol's reading: a feed of its own.
    if (feed_posted_) return;
    feed_posted_ = true;
    host_->expect_posted();
    host_->post([self = shared_from_this()] { self->feed(); });
}

void stream_exchange::feed() {
    feed_posted_ = false;
    auto sink = std::move(body_sink_);
    if (!sink) return;
    // The piece handed out is let go: asking again is what gives its credit back.
    if (!handed_.empty()) {
        const auto n = handed_.size();
        handed_.clear();
        if (live() && !answered_ && !refused_ && !body_failure_) give_body_credit(n);
    }
    if (body_failure_) {
        sink->on_failure(*body_failure_);
        return;
    }
    if (!live() || answered_ || refused_) {
        // The answer went out (or the stream is gone): nothing more of the body is read.
        sink->on_failure(body_stop::client_left);
        return;
    }
    if (!arrived_.empty()) {
        std::swap(arrived_, handed_);
        sink->on_piece(handed_);
        return;
    }
    if (request_ended_) {
        sink->on_end(req_.trailers, req_.trailer_storage);
        return;
    }
    // Nothing has arrived: the reader waits for the client.
    body_sink_ = std::move(sink);
    if (std::exchange(continue_wanted_, false)) send_continue_now();
    on_body_awaited();
}

void stream_exchange::end_body_reading(body_stop why) noexcept {
    if (!body_failure_) body_failure_ = why;
    if (!body_sink_) return;
    if (host_->stopping()) {
        // Told now, not posted: at the stop's end the loop runs no more posted work.
        std::exchange(body_sink_, nullptr)->on_failure(*body_failure_);
        return;
    }
    post_feed();
}

void stream_exchange::fail_body(body_stop why, int status) {
    body_failure_ = why;
    std::string().swap(arrived_);
    // tern answers in the handler's place (413, 408): the handler's late answer is refused,
    // and blocking work not started never runs.
    take_back(false);
    if (auto link = std::exchange(held_, nullptr)) {
        link->abandon();
        left_held_ = link;
    }
    if (body_sink_) post_feed();
    refuse(status);
}

}  // namespace tern::detail

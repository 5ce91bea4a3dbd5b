// A streamed response body (response::source): the connection pulls it from its source
// whenever everything before has been written, frames it (chunks on HTTP/1.1), and waits for
// the source's wake-up when it has nothing. The source only buffers; backpressure is this
// pull: a client that reads nothing is sent nothing, so nothing more is taken from the
// producer (docs/architecture.md, "Responses that outlive the handler").

#include "http1/connection.hpp"

#include "http/protocol_host.hpp"
#include "http/writer.hpp"

#include <utility>

namespace tern::detail {

namespace {

// How much of a streamed body one pull takes: about what one write hands the socket.
constexpr std::size_t stream_pull_bytes = std::size_t{64} * 1024;

}  // namespace

std::shared_ptr<loop_door> http1_connection::door() { return host_.door(); }

void http1_connection::start_stream(bool chunked) {
    stream_chunked_ = chunked;
    const std::shared_ptr<exchange_port> port(shared_from_this(), this);
    stream_->attach(host_.door(), port);
    // A client that leaves while the producer is silent is noticed (and the producer told)
    // without waiting for a write to fail. Only the wait here: a look now could close the
    // connection in the middle of answering (the head is not even written yet).
    wait_for_departure();
}

void http1_connection::pull_stream() {
    // Everything before is written (out_ is empty), or the stream waits idle. Whatever
    // deadline ran before (the first byte's, keep-alive's, a write's that has completed)
    // is over: the write sets its own if it has to wait, and an idle stream its ping. A
    // stream whose pulls always find bytes and whose writes always complete at once must
    // not be closed by one of them (the timer moves on lazily when it fires).
    io_->clear_deadline();
    const std::size_t at = stream_chunked_ ? begin_chunk(out_) : out_.size();
    const pull_status got = stream_->pull(out_, stream_pull_bytes);
    if (stream_chunked_) end_chunk(out_, at);
    switch (got) {
        case pull_status::more:
            if (out_.empty()) {
                wait_for_stream();
            } else {
                write();
            }
            return;
        case pull_status::ended:
            if (stream_chunked_) {
                stream_->take_trailers(stream_trailers_);
                if (stream_trailers_.empty()) {
                    write_last_chunk(out_);
                } else {
                    write_last_chunk(out_, stream_trailers_);
                    stream_trailers_.clear();
                }
            }
            end_stream();
            write();  // then after_write: the next request, or the close (HTTP/1.0)
            return;
        case pull_status::aborted:
            // Cut off: the connection closes without the last chunk, so an HTTP/1.1 client
            // sees an incomplete body. (An HTTP/1.0 body ends at the close either way: such
            // a client cannot tell, RFC 9112 6.3.)
            close();
            return;
    }
}

void http1_connection::wait_for_stream() {
    phase_ = phase::streaming;
    const auto idle = stream_->idle_interval();
    if (idle.count() > 0) {
        io_->set_deadline(idle, deadline_kind::stream_idle);
    } else {
        io_->clear_deadline();
    }
}

void http1_connection::wake() {
    if (!stream_ || phase_ == phase::closed) return;
    // Cut off: now, even while a write waits for a client that does not read.
    if (stream_->cut_off()) {
        close();
        return;
    }
    // While writing, the pull after the write finds the bytes.
    if (phase_ == phase::streaming) pull_stream();
}

void http1_connection::end_stream() noexcept {
    auto source = std::exchange(stream_, nullptr);
    if (!source) return;
    stream_trailers_.clear();
    // The departure watch belongs to the stream: a stale wake-up of it is ignored.
    watching_ = false;
    source->closed();
}

}  // namespace tern::detail

#include "h2/stream.hpp"

#include "h2/connection_impl.hpp"
#include "http/protocol_host.hpp"
#include "http/status.hpp"

#include <tern/config.hpp>

#include "platform/files.hpp"

#include <algorithm>
#include <cstring>
#include <utility>

namespace tern::detail {

h2_stream::h2_stream(h2_connection& connection, std::uint32_t id, const head_limits& limits,
                     std::int64_t send_window, clock::time_point now)
    : stream_exchange(connection.host(), connection.loop(), limits),
      connection_(&connection),
      id_(id),
      send_window_(send_window),
      begun_(now),
      last_read_(now),
      last_sent_(now) {}

h2_stream::~h2_stream() = default;

// ---- the request ---------------------------------------------------------------------------

void h2_stream::on_head(bool ended, clock::time_point now) {
    last_read_ = now;
    take_head(ended, 2, connection_->peer().secure, connection_->peer().client_subject);
}

void h2_stream::send_continue() { connection_->send_continue(id_); }

void h2_stream::on_body(std::string_view data, clock::time_point now) {
    if (head_done_ && !refused_ && !answered_) last_read_ = now;
    const auto before = body_in_memory();
    const auto held = body_held();
    take_body(data);
    // A streamed body's bytes are held until its reader has taken them and asks again
    // (give_body_credit): at most the stream's window.
    if (body_held() > held) return;
    // Bytes kept in memory count against the connection's http2.max_body_memory; spooled
    // or dropped ones give their window back at once.
    if (body_in_memory() > before && !connection_->may_take_more(*this)) {
        window_owed_ += data.size();
        return;
    }
    const auto n = data.size() + std::exchange(window_owed_, 0);
    connection_->give_window(id_, n);
}

std::uint32_t h2_stream::give_back(std::uint64_t n) noexcept {
    // A body that has ended takes no more window; a stream's window comes back in pieces of
    // at least half the initial window (or what is left of it), as the connection's does.
    if (request_ended_ || closed_) {
        to_give_ = 0;
        return 0;
    }
    to_give_ += n;
    if (to_give_ < 32768 && recv_window_ >= 32768) return 0;
    const auto give = static_cast<std::uint32_t>(std::min<std::uint64_t>(to_give_, 0x7fffffff));
    to_give_ -= give;
    recv_window_ += give;
    return give;
}

void h2_stream::give_window() noexcept {
    const auto n = std::exchange(window_owed_, 0);
    if (n == 0 || !live()) return;
    last_read_ = clock::now();
    connection_->give_window(id_, n);
    connection_->want_write();
}

void h2_stream::give_body_credit(std::uint64_t n) {
    connection_->give_window(id_, n);
    connection_->want_write();
}

void h2_stream::on_body_awaited() {
    // The idle deadline starts now: the connection's next pull sets it.
    last_read_ = clock::now();
    connection_->want_write();
}

bool h2_stream::admit_spool() {
    // One more descriptor, so only while the connection holds fewer than h2_max_open_files
    // and the process is not short of them. Otherwise the stream is refused, unprocessed
    // (RFC 9113 8.7: the client may retry it).
    if (connection_->may_open_file()) return true;
    reset(h2::frames::error_code::refused_stream);
    return false;
}

bool h2_stream::may_spool(std::uint64_t after) {
    // h2_max_spooled_bytes, beyond the connection's first spooled body.
    return connection_->may_spool(*this, after);
}

std::string_view h2_stream::remote_ip() const noexcept { return connection_->peer().remote_ip; }

void h2_stream::count_request() noexcept { host_->count_h2_request(); }

// ---- the response --------------------------------------------------------------------------

void h2_stream::submit() {
    if (answered_ || !live()) return;
    answered_ = true;
    body_answered();
    connection_->count_answer();
    if (res_.status < 200 || res_.status > 999) {
        take_source(false);
        reset(h2::frames::error_code::internal_error);  // not a final status
        return;
    }
    const bool body = answer_has_body();
    sending_ = body;
    last_sent_ = clock::now();
    // Trailers (RFC 9113 8.1) after the body, or after the head alone when it has none; not
    // for a HEAD, a 204 or a 304, which end with their head. A streamed body's are known
    // when it ends (write_data).
    trails_ = !res_.trailers.empty() && !req_.is_head && !status_forbids_body(res_.status);
    // The head first: whether the body is streamed (no content-length) is the source's.
    connection_->send_head(*this, res_, !body && !trails_);
    source_ = take_source(body);
    if (!body && trails_) connection_->send_trailers(*this, true);
    if (!body) res_.clear();
    connection_->want_write();
}

h2_stream::wrote h2_stream::write_data(std::string& out, std::size_t allowed, std::size_t& flow) {
    flow = 0;
    last_sent_ = clock::now();
    if (source_) {
        if (pulled_at_ == pulled_.size() && !source_ended_) {
            if (allowed == 0) return wrote::nothing;
            pulled_.clear();
            pulled_at_ = 0;
            switch (source_->pull(pulled_, allowed)) {
                case pull_status::more:
                    break;
                case pull_status::ended:
                    source_ended_ = true;
                    source_->take_trailers(res_.trailers);
                    trails_ = !res_.trailers.empty();
                    break;
                case pull_status::aborted:
                    sending_ = false;
                    return wrote::failed;
            }
        }
        const std::size_t n = std::min(allowed, pulled_.size() - pulled_at_);
        const bool last = source_ended_ && pulled_at_ + n == pulled_.size();
        if (n == 0 && !last) {
            if (!source_ended_ && pulled_at_ == pulled_.size()) source_waits_ = true;  // wake()
            return wrote::nothing;
        }
        if (n == 0 && trails_) return wrote::last;  // the trailers end the stream
        h2::frames::write_data(out, id_, std::string_view(pulled_).substr(pulled_at_, n),
                               last && !trails_);
        pulled_at_ += n;
        progress_ += n;
        flow = n;
        return last ? wrote::last : wrote::frame;
    }
    const std::uint64_t total = res_.file.file ? res_.file.length : res_.body.size();
    const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(allowed, total - sent_));
    if (n == 0 && sent_ != total) return wrote::nothing;
    const bool last = sent_ + n == total;
    if (res_.file.file) {
        // Straight from the file into the write buffer, after the frame's header.
        const std::size_t at = out.size();
        h2::frames::write_data_header(out, id_, static_cast<std::uint32_t>(n), last && !trails_);
        out.resize(at + h2::frames::header_size + n);
        const ssize_t got =
            platform::read_file_at(res_.file.file.get(), out.data() + at + h2::frames::header_size,
                                   n, res_.file.offset + sent_);
        if (got < 0 || static_cast<std::size_t>(got) != n) {
            out.resize(at);  // the file shrank or failed
            sending_ = false;
            return wrote::failed;
        }
    } else {
        h2::frames::write_data(out, id_, std::string_view(res_.body).substr(sent_, n),
                               last && !trails_);
    }
    sent_ += n;
    progress_ += n;
    flow = n;
    return last ? wrote::last : wrote::frame;
}

std::uint64_t h2_stream::held_bytes() const noexcept {
    if (!answered_ || closed_ || !sending_) return 0;
    // A source's own buffer is bounded by max_stream_buffer; a file's bytes are on disk.
    if (source_) return pulled_.size() - pulled_at_;
    if (res_.file.file) return 0;
    return res_.body.size() - sent_;
}

void h2_stream::reset(h2::frames::error_code code) noexcept {
    sending_ = false;
    if (!live()) return;
    connection_->reset(*this, code);
    connection_->want_write();
}

void h2_stream::on_close() noexcept {
    if (closed_) return;
    closed_ = true;
    sending_ = false;
    // Blocking work not started never runs; a held response and a body source are told
    // that nothing more reaches the client.
    release();
    if (auto source = std::exchange(source_, nullptr)) source->closed();
}

void h2_stream::detach() noexcept { connection_ = nullptr; }

// ---- answered later ------------------------------------------------------------------------

void h2_stream::wake() {
    if (!live() || !source_) return;
    if (source_->cut_off()) {
        reset(h2::frames::error_code::internal_error);  // the producer overflowed its buffer
        return;
    }
    if (!source_waits_) return;  // the next read finds the bytes
    source_waits_ = false;
    connection_->want_write();
}

// ---- deadlines and stop --------------------------------------------------------------------

h2_stream::clock::time_point h2_stream::next_deadline() const noexcept {
    const auto& cfg = host_->settings();
    if (closed_) return clock::time_point::max();
    if (!head_done_) return begun_ + cfg.timeouts.header;
    // A body whose window the server holds back is waited for by the server, not idle; a
    // streamed one only while its reader asks (a slow consumer is not a slow client).
    if (!request_ended_ && !refused_ && !answered_) {
        const bool waits = streams_body() ? body_awaited() : window_owed_ == 0;
        return waits ? last_read_ + cfg.timeouts.body_idle : clock::time_point::max();
    }
    if (sending_ && !source_waits_ && stalled_since_ != clock::time_point{}) {
        return stalled_since_ + cfg.timeouts.write;
    }
    if (sending_ && source_waits_ && source_) {
        const auto idle = source_->idle_interval();
        if (idle.count() > 0) return last_sent_ + idle;
    }
    return clock::time_point::max();
}

bool h2_stream::check(clock::time_point now) {
    if (!live()) return true;
    const auto& cfg = host_->settings();
    if (!head_done_) return now < begun_ + cfg.timeouts.header;
    if (!request_ended_ && !refused_ && !answered_ && now >= last_read_ + cfg.timeouts.body_idle) {
        if (streams_body()) {
            // The reader hears `idle`, and tern answers 408 in the handler's place.
            if (body_awaited()) {
                fail_body(body_stop::idle, 408);
                return true;
            }
        } else if (window_owed_ == 0) {
            refuse(408);  // RFC 9110 15.5.9, as over HTTP/1
            return true;
        }
    }
    if (sending_ && !source_waits_) {
        // The stream's own flow-control window holds it back (the connection's window is
        // h2_connection's to watch). A minimum rate, not "any progress": once stalled, the
        // stream must send http2.min_send_progress bytes within timeouts.write, or be granted
        // that much window, else it is reset. So a window opened a byte at a time (each byte
        // progress) ends within 2 x timeouts.write of the trickle's start.
        const auto window = send_window_;
        const auto need = static_cast<std::int64_t>(cfg.http2.min_send_progress);
        if (window >= need) {
            stalled_since_ = clock::time_point{};
        } else if (stalled_since_ == clock::time_point{} ||
                   progress_ - stalled_progress_ >= cfg.http2.min_send_progress) {
            stalled_since_ = now;
            stalled_progress_ = progress_;
        } else if (now >= stalled_since_ + cfg.timeouts.write) {
            reset(h2::frames::error_code::cancel);
        }
        return true;
    }
    stalled_since_ = clock::time_point{};
    if (sending_ && source_waits_ && source_) {
        const auto idle = source_->idle_interval();
        if (idle.count() > 0 && now >= last_sent_ + idle) {
            last_sent_ = now;
            source_->on_idle();  // e.g. an SSE keep-alive comment: the pull finds it
            source_waits_ = false;
        }
    }
    return true;
}

void h2_stream::stop() {
    // Blocking work that has not started is answered now (503).
    stop_deferred();
    // An endless stream (SSE) ends; its client reconnects elsewhere.
    if (source_ && source_->end_on_stop() && source_waits_) source_waits_ = false;
}

}  // namespace tern::detail

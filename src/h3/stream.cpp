// One HTTP/3 request stream: see stream.hpp.

#include "h3/stream.hpp"

#include "h3/connection.hpp"
#include "http/protocol_host.hpp"
#include "http/status.hpp"

#include <tern/config.hpp>

#include <nghttp3/nghttp3.h>

#include <unistd.h>

#include <algorithm>
#include <utility>
#include <vector>

// Last: nghttp3's functions through the table that loads it on first use.
#include "h3/calls.hpp"

namespace tern::detail {

h3_stream::h3_stream(h3_connection& connection, std::int64_t id, const head_limits& limits,
                     clock::time_point now)
    : stream_exchange(connection.host(), connection.host().door(), limits),
      connection_(&connection),
      id_(id),
      begun_(now),
      last_read_(now),
      last_sent_(now),
      window_start_(now) {}

h3_stream::~h3_stream() = default;

// ---- the request ---------------------------------------------------------------------------

void h3_stream::on_head(bool ended) {
    if (!head_done_) last_read_ = clock::now();
    take_head(ended, 3, true, {});
}

void h3_stream::on_body(std::string_view data) {
    if (head_done_ && !refused_ && !answered_) last_read_ = clock::now();
    const auto before = body_in_memory();
    const auto held = body_held();
    take_body(data);
    // A streamed body's bytes are held until its reader has taken them and asks again
    // (give_body_credit): at most the stream's window.
    if (body_held() > held) {
        connection_->control().hold_window(id_, data.size());
        return;
    }
    // Bytes kept in memory count against the connection's http3.max_body_memory; the
    // credit of spooled or dropped ones comes back at once (the QUIC connection's).
    if (body_in_memory() > before && !connection_->may_take_more(*this)) {
        window_owed_ += data.size();
        connection_->control().hold_window(id_, data.size());
        return;
    }
    give_window();
}

void h3_stream::give_window() noexcept {
    const auto n = std::exchange(window_owed_, 0);
    if (n == 0 || !live()) return;
    last_read_ = clock::now();
    connection_->control().give_window(id_, n);
}

void h3_stream::give_body_credit(std::uint64_t n) {
    last_read_ = clock::now();
    connection_->control().give_window(id_, n);
}

void h3_stream::on_body_awaited() { last_read_ = clock::now(); }

void h3_stream::on_peer_reset() noexcept {
    // The client cancelled the request: a streamed body's reader hears client_left.
    if (streams_body() && !request_ended_) end_body_reading(body_stop::client_left);
}

std::string_view h3_stream::remote_ip() const noexcept { return connection_->remote_ip(); }

void h3_stream::count_request() noexcept { host_->count_h3_request(); }

void h3_stream::send_continue() {
    // Inside nghttp3's callback: submitted once it has returned (submit_continue).
    connection_->queue_continue(*this);
}

void h3_stream::send_continue_now() {
    // A streamed body's first ask, outside nghttp3's callbacks.
    submit_continue();
    connection_->control().want_write();
}

void h3_stream::submit_continue() {
    if (!live() || answered_) return;
    // An interim 100 (RFC 9110 10.1.1): the client sends its body without waiting longer.
    static constexpr char status_name[] = ":status";
    static constexpr char continue_code[] = "100";
    const nghttp3_nv nv = {reinterpret_cast<std::uint8_t*>(const_cast<char*>(status_name)),
                           reinterpret_cast<std::uint8_t*>(const_cast<char*>(continue_code)),
                           sizeof status_name - 1, sizeof continue_code - 1, NGHTTP3_NV_FLAG_NONE};
    nghttp3_conn_submit_info(connection_->raw(), id_, &nv, 1);
}

bool h3_stream::admit_spool() {
    // One more descriptor, so only while the connection holds fewer than
    // http3.max_open_files and the process is not short of them.
    if (connection_->may_open_file()) return true;
    reject();
    return false;
}

bool h3_stream::may_spool(std::uint64_t after) { return connection_->may_spool(*this, after); }

void h3_stream::reject() noexcept {
    if (!live()) return;
    // RFC 9114 4.1.1: not processed at all, so the client may retry it.
    connection_->stop_reading(id_, NGHTTP3_H3_REQUEST_REJECTED);
    reset(NGHTTP3_H3_REQUEST_REJECTED);
}

void h3_stream::after_refusal() {
    // The rest of the request is not wanted (RFC 9114 4.1.1: H3_NO_ERROR once answered).
    if (!request_ended_) connection_->stop_reading(id_, NGHTTP3_H3_NO_ERROR);
}

// ---- the response --------------------------------------------------------------------------

namespace {

nghttp3_ssize read_callback(nghttp3_conn* /*conn*/, std::int64_t /*id*/, nghttp3_vec* vec,
                            std::size_t count, std::uint32_t* flags, void* /*conn_user_data*/,
                            void* stream_user_data) {
    return static_cast<h3_stream*>(stream_user_data)->read_body(vec, count, flags);
}

}  // namespace

void h3_stream::submit() {
    if (answered_ || !live()) return;
    answered_ = true;
    body_answered();
    // Answered before a streamed body's end: the rest is not wanted (RFC 9114 4.1, STOP_SENDING
    // with H3_NO_ERROR), and the complete answer goes out.
    if (streams_body() && !request_ended_ && !refused_) {
        connection_->stop_reading(id_, NGHTTP3_H3_NO_ERROR);
    }
    const bool body = answer_has_body();
    // Trailers (RFC 9114 4.1) after the body, or after the head alone when it has none; not
    // for a HEAD, a 204 or a 304. A streamed body's are known when it ends (read_body).
    trails_ = !res_.trailers.empty() && !req_.is_head && !status_forbids_body(res_.status);
    // The connection's fields are used at once: nghttp3 copies them.
    auto& head = connection_->response_scratch();
    head.build(res_);
    const nghttp3_data_reader reader{read_callback};
    const int submitted =
        nghttp3_conn_submit_response(connection_->raw(), id_, head.fields().data(),
                                     head.fields().size(), body || trails_ ? &reader : nullptr);
    source_ = take_source(body && submitted == 0);
    if (submitted != 0) {
        reset();  // e.g. a status nghttp3 refuses as final (1xx)
        return;
    }
    // Known now: submitted at once, sent after the body's last DATA frame.
    if (trails_ && !source_) submit_trailers();
    if (!body && !trails_) res_.clear();
    last_sent_ = window_start_ = clock::now();
    window_acked_ = acked_;
    connection_->control().want_write();
}

void h3_stream::submit_trailers() {
    if (!live() || reset_) return;
    std::vector<nghttp3_nv> fields;
    fields.reserve(res_.trailers.size());
    for (const auto& [name, value] : res_.trailers) {
        // nghttp3 copies them (flags none) and only reads through the pointers.
        fields.push_back({reinterpret_cast<std::uint8_t*>(const_cast<char*>(name.data())),
                          reinterpret_cast<std::uint8_t*>(const_cast<char*>(value.data())),
                          name.size(), value.size(), NGHTTP3_NV_FLAG_NONE});
    }
    if (nghttp3_conn_submit_trailers(connection_->raw(), id_, fields.data(), fields.size()) != 0) {
        reset();
        return;
    }
    connection_->control().want_write();
}

long h3_stream::read_body(void* vecs, std::size_t count, std::uint32_t* flags) {
    auto* vec = static_cast<nghttp3_vec*>(vecs);
    if (count == 0) return 0;
    // The end of the body is not the end of the stream when trailers follow.
    const std::uint32_t end =
        trails_ ? NGHTTP3_DATA_FLAG_EOF | NGHTTP3_DATA_FLAG_NO_END_STREAM : NGHTTP3_DATA_FLAG_EOF;
    if (!res_.file.file && !source_) {
        // The body in memory, whole: it stays in res_ until the stream closes.
        *flags |= end;
        if (body_given_ || res_.body.empty()) return 0;
        body_given_ = true;
        vec[0] = {reinterpret_cast<std::uint8_t*>(res_.body.data()), res_.body.size()};
        return 1;
    }
    if (unacked_ >= max_unacked) {
        waits_ = true;  // resumed by on_acked
        return NGHTTP3_ERR_WOULDBLOCK;
    }
    std::string piece;
    if (res_.file.file) {
        const auto n =
            static_cast<std::size_t>(std::min<std::uint64_t>(piece_size, res_.file.length - sent_));
        piece.resize(n);
        const ssize_t got = n == 0 ? 0
                                   : ::pread(res_.file.file.get(), piece.data(), n,
                                             static_cast<off_t>(res_.file.offset + sent_));
        if (n != 0 && got <= 0) {
            reset();  // the file shrank or failed
            waits_ = true;
            return NGHTTP3_ERR_WOULDBLOCK;
        }
        piece.resize(static_cast<std::size_t>(std::max<ssize_t>(got, 0)));
        sent_ += piece.size();
        if (sent_ == res_.file.length) *flags |= end;
    } else {
        if (!source_ended_) {
            switch (source_->pull(piece, piece_size)) {
                case pull_status::more:
                    break;
                case pull_status::ended:
                    source_ended_ = true;
                    source_->take_trailers(res_.trailers);
                    if (!res_.trailers.empty()) {
                        // Inside nghttp3's callback: submitted once it has returned.
                        trails_ = true;
                        connection_->queue_trailers(*this);
                    }
                    break;
                case pull_status::aborted:
                    reset();
                    waits_ = true;
                    return NGHTTP3_ERR_WOULDBLOCK;
            }
        }
        if (piece.empty() && !source_ended_) {
            waits_ = waits_for_source_ = true;  // resumed by wake()
            return NGHTTP3_ERR_WOULDBLOCK;
        }
        last_sent_ = clock::now();
        if (source_ended_) {
            *flags |= trails_ ? NGHTTP3_DATA_FLAG_EOF | NGHTTP3_DATA_FLAG_NO_END_STREAM
                              : NGHTTP3_DATA_FLAG_EOF;
        }
    }
    if (piece.empty()) return 0;
    unacked_ += piece.size();
    pieces_.push_back(std::move(piece));
    vec[0] = {reinterpret_cast<std::uint8_t*>(pieces_.back().data()), pieces_.back().size()};
    return 1;
}

std::uint64_t h3_stream::held_bytes() const noexcept {
    if (!answered_ || closed_) return 0;
    if (res_.file.file || source_) return unacked_;
    return res_.body.size() - std::min<std::uint64_t>(body_acked_, res_.body.size());
}

void h3_stream::on_acked(std::uint64_t n) {
    acked_ += n;
    if (!res_.file.file && !source_) {
        body_acked_ += n;  // the body in memory
        return;
    }
    if (pieces_.empty()) return;
    unacked_ -= std::min(unacked_, n);
    acked_in_front_ += n;
    while (!pieces_.empty() && acked_in_front_ >= pieces_.front().size()) {
        acked_in_front_ -= pieces_.front().size();
        pieces_.pop_front();
    }
    if (waits_ && unacked_ < max_unacked && live()) resume_body();
}

void h3_stream::resume_body() noexcept {
    waits_ = waits_for_source_ = false;
    nghttp3_conn_resume_stream(connection_->raw(), id_);
    connection_->control().want_write();
}

void h3_stream::reset() noexcept { reset(NGHTTP3_H3_INTERNAL_ERROR); }

void h3_stream::reset(std::uint64_t code) noexcept {
    if (!live() || reset_) return;
    reset_ = true;
    connection_->stop_writing(id_, code);
}

void h3_stream::cancel_answer() noexcept { reset(NGHTTP3_H3_REQUEST_CANCELLED); }

void h3_stream::on_close() noexcept {
    if (closed_) return;
    closed_ = true;
    // Blocking work not started never runs; a held response and a body source are told
    // that nothing more reaches the client (each still work while the application holds
    // it: the stream's place waits for it, h3_connection::release_when_done).
    release();
    if (auto source = std::exchange(source_, nullptr)) {
        leave(source);
        source->closed();
    }
    pieces_.clear();
}

// ---- answered later ------------------------------------------------------------------------

void h3_stream::wake() {
    if (!live() || !source_) return;
    if (source_->cut_off()) {
        reset();  // the producer overflowed its buffer
        return;
    }
    if (waits_ && unacked_ < max_unacked) resume_body();
}

void h3_stream::check(clock::time_point now) {
    if (!live()) return;
    const auto& cfg = host_->settings();
    if (!head_done_) {
        if (now >= begun_ + cfg.timeouts.header) {
            // No head to answer: the stream is cancelled (RFC 9114 4.1.1).
            connection_->stop_reading(id_, NGHTTP3_H3_REQUEST_INCOMPLETE);
            reset();
        }
        return;
    }
    if (!request_ended_ && !refused_ && !answered_) {
        // A body whose window the server holds back is waited for by the server, not idle; a
        // streamed one only while its reader asks (a slow consumer is not a slow client).
        if (now < last_read_ + cfg.timeouts.body_idle) return;
        if (streams_body()) {
            if (body_awaited()) fail_body(body_stop::idle, 408);  // the reader hears idle
        } else if (window_owed_ == 0) {
            refuse(408);  // as over HTTP/1
        }
        return;
    }
    if (!answered_) return;  // the handler's: deferred, held
    if (waits_for_source_ && source_) {
        // Silent by the producer's choice, not the client's: its rate starts again after.
        window_start_ = now;
        window_acked_ = acked_;
        // An SSE keep-alive when it asks for one.
        const auto idle = source_->idle_interval();
        if (idle.count() > 0 && now >= last_sent_ + idle) {
            last_sent_ = now;
            source_->on_idle();  // e.g. a comment line: the pull finds it
            resume_body();
        }
        return;
    }
    // Bytes are out or waiting for room: the client's flow control or its acknowledgements
    // hold them. A minimum rate, not "any progress" (as http2.min_send_progress): the
    // client must acknowledge http3.min_send_progress bytes per timeouts.write, else the
    // answer is cancelled (RFC 9114 4.1.1: H3_REQUEST_CANCELLED, a response the server
    // began and gives up). One that acknowledges nothing ends within timeouts.write of the
    // answer; one that reads a trickle (each acknowledgement "progress") within
    // timeouts.write of its last step of http3.min_send_progress.
    if (acked_ - window_acked_ >= std::max<std::size_t>(cfg.http3.min_send_progress, 1)) {
        window_start_ = now;
        window_acked_ = acked_;
    } else if (now >= window_start_ + cfg.timeouts.write) {
        cancel_answer();
    }
}

void h3_stream::stop() {
    // Blocking work that has not started is answered now (503).
    stop_deferred();
    // An endless stream (SSE) ends; its client reconnects elsewhere.
    if (source_ && source_->end_on_stop() && waits_ && live()) resume_body();
}

}  // namespace tern::detail

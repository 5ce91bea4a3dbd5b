// One HTTP/3 request stream: see stream.hpp.

#include "h3/stream.hpp"

#include "h3/connection.hpp"
#include "http/error.hpp"
#include "http/host.hpp"
#include "http/protocol_host.hpp"
#include "http/spooled_body.hpp"
#include "http/status.hpp"

#include <tern/config.hpp>

#include <nghttp3/nghttp3.h>

#include <unistd.h>

#include <algorithm>
#include <charconv>

namespace tern::detail {

h3_stream::h3_stream(h3_connection& connection, std::int64_t id, const head_limits& limits,
                     clock::time_point now)
    : connection_(&connection),
      host_(&connection.host()),
      door_(connection.host().door()),
      id_(id),
      head_(limits),
      begun_(now),
      last_read_(now),
      last_ack_(now),
      last_sent_(now) {}

h3_stream::~h3_stream() = default;

// ---- the request ---------------------------------------------------------------------------

void h3_stream::on_field(std::string_view name, std::string_view value, bool trailer) {
    if (trailer) {
        head_.add_trailer(name, value);
    } else {
        head_.add(name, value);
    }
}

void h3_stream::on_head(bool ended) {
    if (head_done_) return;  // once: a second section is the trailers (on_field)
    head_done_ = true;
    last_read_ = clock::now();
    request_ended_ = ended;
    const bool filled = head_.fill(req_, 3);
    req_.secure = true;
    if (const int status = head_.refusal_status(); status != 0) {
        refuse(status);
        return;
    }
    const auto host = req_.header("host");
    if (!filled || (host && !is_valid_host(*host))) {
        refuse(400);
        return;
    }
    if (ended) {
        ready_ = true;
        return;
    }
    body_limit_ = host_->handler().body_limit(req_);
    // A declared length over the limit is refused before any of the body is read.
    if (const auto length = req_.header("content-length")) {
        std::uint64_t declared = 0;
        const auto [end, ec] =
            std::from_chars(length->data(), length->data() + length->size(), declared);
        if (ec == std::errc{} && declared > body_limit_) refuse(413);
    }
}

void h3_stream::on_body(std::string_view data) {
    if (refused_ || answered_ || !head_done_) return;  // answered already: dropped
    last_read_ = clock::now();
    body_bytes_ += data.size();
    if (body_bytes_ > body_limit_) {
        refuse(413);
        return;
    }
    const parser_limits& limits = host_->limits();
    if (!spool_ && limits.spool_body_above != 0 && body_bytes_ > limits.spool_body_above) {
        // A large body goes to a temporary file as it arrives (docs/uploads.md), against
        // the server's bound on spooled bytes.
        spool_ = spooled_body::create(limits.spool_directory, limits.spool_space);
        if (!spool_) {
            refuse(500, failure_message(error::body_spool_failed));
            return;
        }
        if (!spool(req_.body)) return;
        req_.body = std::string();
    }
    if (spool_) {
        spool(data);
        return;
    }
    req_.body.append(data);
}

bool h3_stream::spool(std::string_view data) {
    auto outcome = spool_->append(data);
    if (outcome == spooled_body::outcome::stored) return true;
    const error why =
        outcome == spooled_body::outcome::full ? error::body_spool_full : error::body_spool_failed;
    refuse(status_of(why), failure_message(why));
    spool_.reset();  // its space is given back at once
    return false;
}

void h3_stream::on_end() {
    // nghttp3 tells a head that ends the stream twice: end_headers with fin, then end_stream.
    // The request became complete at the first; running it again would hand the same
    // request to the handler twice (and a held answer's first link would outlive the stream).
    if (std::exchange(request_ended_, true)) return;
    if (refused_ || answered_ || !head_done_) return;
    if (const int status = head_.refusal_status(); status != 0) return refuse(status);  // trailers
    if (spool_) {
        if (!spool_->finish()) {
            refuse(500, failure_message(error::body_spool_failed));
            return;
        }
        req_.spooled = std::move(spool_);
    }
    ready_ = true;
}

void h3_stream::run() {
    if (!live() || answered_) return;
    host_->count_request();
    host_->handler().handle(req_, res_, connection_->remote_ip(), *this, host_->app_state());
    if (!deferred_ && !answered_) submit();
}

void h3_stream::refuse(int status, std::string_view message) {
    refused_ = true;
    if (answered_ || !live()) return;
    host_->count_request();
    res_.clear();
    host_->handler().handle_failure(req_, status, message, res_, connection_->remote_ip(),
                                    host_->app_state());
    submit();
    // The rest of the request is not wanted (RFC 9114 4.1.1: H3_NO_ERROR once answered).
    if (!request_ended_) connection_->control().shutdown_read(id_, NGHTTP3_H3_NO_ERROR);
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
    const std::uint64_t length = res_.file.file ? res_.file.length : res_.body.size();
    const bool body = !req_.is_head && !status_forbids_body(res_.status) &&
                      (res_.source != nullptr || length != 0);
    // The connection's fields are used at once: nghttp3 copies them.
    auto& head = connection_->response_scratch();
    head.build(res_);
    const nghttp3_data_reader reader{read_callback};
    const int submitted =
        nghttp3_conn_submit_response(connection_->raw(), id_, head.fields().data(),
                                     head.fields().size(), body ? &reader : nullptr);
    if (res_.source) {
        auto source = std::move(res_.source);
        if (body && submitted == 0) {
            source_ = std::move(source);
            const std::shared_ptr<exchange_port> port(shared_from_this(), this);
            source_->attach(door_, port);
        } else {
            source->closed();  // HEAD, 204, 304: the head alone; the producer is told at once
        }
    }
    if (submitted != 0) {
        reset();  // e.g. a status nghttp3 refuses as final (1xx)
        return;
    }
    if (!body) res_.clear();
    last_ack_ = last_sent_ = clock::now();
    connection_->control().want_write();
}

long h3_stream::read_body(void* vecs, std::size_t count, std::uint32_t* flags) {
    auto* vec = static_cast<nghttp3_vec*>(vecs);
    if (count == 0) return 0;
    if (!res_.file.file && !source_) {
        // The body in memory, whole: it stays in res_ until the stream closes.
        *flags |= NGHTTP3_DATA_FLAG_EOF;
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
        if (sent_ == res_.file.length) *flags |= NGHTTP3_DATA_FLAG_EOF;
    } else {
        if (!source_ended_) {
            switch (source_->pull(piece, piece_size)) {
                case pull_status::more:
                    break;
                case pull_status::ended:
                    source_ended_ = true;
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
        if (source_ended_) *flags |= NGHTTP3_DATA_FLAG_EOF;
    }
    if (piece.empty()) return 0;
    unacked_ += piece.size();
    pieces_.push_back(std::move(piece));
    vec[0] = {reinterpret_cast<std::uint8_t*>(pieces_.back().data()), pieces_.back().size()};
    return 1;
}

void h3_stream::on_acked(std::uint64_t n) {
    last_ack_ = clock::now();
    if (pieces_.empty()) return;  // the body in memory
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

void h3_stream::reset() noexcept {
    if (!live() || reset_) return;
    reset_ = true;
    connection_->control().shutdown_write(id_, NGHTTP3_H3_INTERNAL_ERROR);
}

void h3_stream::on_close() noexcept {
    if (closed_) return;
    closed_ = true;
    // Blocking work not started never runs; a held response and a body source are told
    // that nothing more reaches the client.
    take_back(false);
    if (auto link = std::exchange(held_, nullptr)) link->abandon();
    if (auto source = std::exchange(source_, nullptr)) source->closed();
    pieces_.clear();
    spool_.reset();
}

// ---- answered later ------------------------------------------------------------------------

answer_later::resume_fn h3_stream::defer(withdraw_fn withdraw) {
    deferred_ = true;
    withdraw_ = std::move(withdraw);
    host_->expect_posted();
    return [host = host_, self = shared_from_this()](std::function<void()> on_loop) mutable {
        // Any thread. The worker (the host) outlives its deferred requests; the stream is
        // kept by this reference until the resume has run on the loop.
        host->post(
            [self = std::move(self), fn = std::move(on_loop)]() mutable { self->resume(fn); });
    };
}

void h3_stream::resume(const std::function<void()>& on_loop) noexcept {
    withdraw_ = nullptr;
    if (!live()) return;  // reset or gone meanwhile: nobody to answer
    deferred_ = false;
    on_loop();
    submit();  // and wakes the connection
}

bool h3_stream::take_back(bool answer_now) noexcept {
    if (!withdraw_) return false;
    auto instead = std::exchange(withdraw_, nullptr)();
    if (!instead) return false;  // it has started: its resume comes
    host_->unexpect_posted();
    if (answer_now) resume(instead);
    return true;
}

std::shared_ptr<loop_door> h3_stream::door() { return door_; }

void h3_stream::hold(std::shared_ptr<held_link> link) {
    held_ = std::move(link);
    deferred_ = true;
}

void h3_stream::finish(response&& res) {
    held_.reset();
    if (!live() || answered_) return;
    res_ = std::move(res);
    deferred_ = false;
    submit();
}

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
            connection_->control().shutdown_read(id_, NGHTTP3_H3_REQUEST_INCOMPLETE);
            reset();
        }
        return;
    }
    if (!request_ended_ && !refused_ && !answered_) {
        if (now >= last_read_ + cfg.timeouts.body_idle) refuse(408);  // as over HTTP/1
        return;
    }
    if (!answered_) return;  // the handler's: deferred, held
    if (waits_for_source_ && source_) {
        // Silent by the producer's choice: an SSE keep-alive when it asks for one.
        const auto idle = source_->idle_interval();
        if (idle.count() > 0 && now >= last_sent_ + idle) {
            last_sent_ = now;
            source_->on_idle();  // e.g. a comment line: the pull finds it
            resume_body();
        }
        return;
    }
    // Bytes are out or waiting for room, and the client acknowledges nothing of them.
    if (now >= last_ack_ + cfg.timeouts.write) reset();
}

void h3_stream::stop() {
    // Blocking work that has not started is answered now (503).
    if (deferred_) take_back(true);
    // An endless stream (SSE) ends; its client reconnects elsewhere.
    if (source_ && source_->end_on_stop() && waits_ && live()) resume_body();
}

}  // namespace tern::detail

#include "h2/stream.hpp"

#include "h2/connection_impl.hpp"
#include "http/protocol_host.hpp"

#include <tern/config.hpp>

#include <nghttp2/nghttp2.h>

#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <utility>

// Last: nghttp2's functions through the table that loads it on first use.
#include "h2/calls.hpp"

namespace tern::detail {

namespace {

long read_callback(nghttp2_session* /*s*/, std::int32_t /*id*/, std::uint8_t* buf,
                   std::size_t length, std::uint32_t* flags, nghttp2_data_source* source,
                   void* /*ud*/) {
    return static_cast<h2_stream*>(source->ptr)->read_body(buf, length, flags);
}

}  // namespace

h2_stream::h2_stream(h2_connection& connection, std::int32_t id, const head_limits& limits,
                     clock::time_point now)
    : stream_exchange(connection.host(), connection.loop(), limits),
      connection_(&connection),
      id_(id),
      begun_(now),
      last_read_(now),
      last_sent_(now) {}

h2_stream::~h2_stream() = default;

// ---- the request ---------------------------------------------------------------------------

bool h2_stream::on_field(std::string_view name, std::string_view value, bool trailer,
                         std::size_t cut) {
    constexpr std::size_t hpack_entry_overhead = 32;  // RFC 9113 6.5.2, as HPACK counts an entry
    block_size_ += name.size() + value.size() + hpack_entry_overhead;
    if (block_size_ > cut) return false;
    add_field(name, value, trailer);
    return true;
}

void h2_stream::on_head(bool ended, clock::time_point now) {
    block_size_ = 0;  // trailers are a block of their own
    last_read_ = now;
    take_head(ended, 2, connection_->peer().secure, connection_->peer().client_subject);
}

void h2_stream::send_continue() {
    static constexpr char status_name[] = ":status";
    static constexpr char continue_code[] = "100";
    const nghttp2_nv nv = {reinterpret_cast<std::uint8_t*>(const_cast<char*>(status_name)),
                           reinterpret_cast<std::uint8_t*>(const_cast<char*>(continue_code)),
                           sizeof status_name - 1, sizeof continue_code - 1, NGHTTP2_NV_FLAG_NONE};
    nghttp2_submit_headers(connection_->raw(), NGHTTP2_FLAG_NONE, id_, nullptr, &nv, 1, nullptr);
}

void h2_stream::on_body(std::string_view data, clock::time_point now) {
    if (head_done_ && !refused_ && !answered_) last_read_ = now;
    const auto before = body_in_memory();
    take_body(data);
    // Bytes kept in memory count against the connection's http2.max_body_memory; spooled
    // or dropped ones give their window back at once.
    if (body_in_memory() > before && !connection_->may_take_more(*this)) {
        window_owed_ += data.size();
        return;
    }
    const auto n = data.size() + std::exchange(window_owed_, 0);
    nghttp2_session_consume_stream(connection_->raw(), id_, n);
}

void h2_stream::give_window() noexcept {
    const auto n = std::exchange(window_owed_, 0);
    if (n == 0 || !live()) return;
    last_read_ = clock::now();
    nghttp2_session_consume_stream(connection_->raw(), id_, n);
    connection_->want_write();
}

bool h2_stream::admit_spool() {
    // One more descriptor, so only while the connection holds fewer than h2_max_open_files
    // and the process is not short of them. Otherwise the stream is refused, unprocessed
    // (RFC 9113 8.7: the client may retry it).
    if (connection_->may_open_file()) return true;
    reset(NGHTTP2_REFUSED_STREAM);
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
    connection_->count_answer();
    const bool body = answer_has_body();
    // The connection's fields are used at once: nghttp2 copies them.
    response_fields<nghttp2_nv>& head = connection_->response_scratch();
    head.build(res_);
    nghttp2_data_provider provider{};
    provider.source.ptr = this;
    provider.read_callback = read_callback;
    const int submitted = nghttp2_submit_response(connection_->raw(), id_, head.fields().data(),
                                                  head.fields().size(), body ? &provider : nullptr);
    // nghttp2 pulls the body only when it sends, after this.
    source_ = take_source(body && submitted == 0);
    if (submitted != 0) {
        reset(NGHTTP2_INTERNAL_ERROR);  // e.g. a status nghttp2 refuses as final (1xx)
        return;
    }
    sending_ = body;
    last_sent_ = clock::now();
    if (!body) res_.clear();
    connection_->want_write();
}

long h2_stream::read_body(std::uint8_t* buf, std::size_t length, std::uint32_t* flags) {
    const long n = read_body_bytes(buf, length, flags);
    if (n > 0) progress_ += static_cast<std::uint64_t>(n);
    return n;
}

long h2_stream::read_body_bytes(std::uint8_t* buf, std::size_t length, std::uint32_t* flags) {
    last_sent_ = clock::now();
    if (source_) {
        if (pulled_at_ == pulled_.size()) {
            pulled_.clear();
            pulled_at_ = 0;
            if (!source_ended_) {
                switch (source_->pull(pulled_, length)) {
                    case pull_status::more:
                        break;
                    case pull_status::ended:
                        source_ended_ = true;
                        break;
                    case pull_status::aborted:
                        sending_ = false;
                        return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;  // RST_STREAM
                }
            }
        }
        const std::size_t n = std::min(length, pulled_.size() - pulled_at_);
        if (n == 0 && !source_ended_) {
            source_waits_ = true;
            return NGHTTP2_ERR_DEFERRED;  // resumed by wake()
        }
        if (n != 0) std::memcpy(buf, pulled_.data() + pulled_at_, n);
        pulled_at_ += n;
        if (source_ended_ && pulled_at_ == pulled_.size()) {
            *flags |= NGHTTP2_DATA_FLAG_EOF;
            sending_ = false;
        }
        return static_cast<long>(n);
    }
    std::size_t n = 0;
    if (res_.file.file) {
        n = static_cast<std::size_t>(std::min<std::uint64_t>(length, res_.file.length - sent_));
        const ssize_t got =
            ::pread(res_.file.file.get(), buf, n, static_cast<off_t>(res_.file.offset + sent_));
        if (got <= 0) {
            sending_ = false;
            return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;  // the file shrank or failed
        }
        n = static_cast<std::size_t>(got);
    } else {
        n = static_cast<std::size_t>(std::min<std::uint64_t>(length, res_.body.size() - sent_));
        if (n != 0) std::memcpy(buf, res_.body.data() + sent_, n);
    }
    sent_ += n;
    const std::uint64_t total = res_.file.file ? res_.file.length : res_.body.size();
    if (sent_ == total) {
        *flags |= NGHTTP2_DATA_FLAG_EOF;
        sending_ = false;
    }
    return static_cast<long>(n);
}

std::uint64_t h2_stream::held_bytes() const noexcept {
    if (!answered_ || closed_ || !sending_) return 0;
    // A source's own buffer is bounded by max_stream_buffer; a file's bytes are on disk.
    if (source_) return pulled_.size() - pulled_at_;
    if (res_.file.file) return 0;
    return res_.body.size() - sent_;
}

void h2_stream::reset(std::uint32_t error_code) noexcept {
    sending_ = false;
    if (!live()) return;
    nghttp2_submit_rst_stream(connection_->raw(), NGHTTP2_FLAG_NONE, id_, error_code);
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
        reset(NGHTTP2_INTERNAL_ERROR);  // the producer overflowed its buffer
        return;
    }
    if (!source_waits_) return;  // the next read finds the bytes
    source_waits_ = false;
    nghttp2_session_resume_data(connection_->raw(), id_);
    connection_->want_write();
}

// ---- deadlines and stop --------------------------------------------------------------------

h2_stream::clock::time_point h2_stream::next_deadline() const noexcept {
    const auto& cfg = host_->settings();
    if (closed_) return clock::time_point::max();
    if (!head_done_) return begun_ + cfg.timeouts.header;
    // A body whose window the server holds back is waited for by the server, not idle.
    if (!request_ended_ && !refused_ && !answered_) {
        return window_owed_ != 0 ? clock::time_point::max() : last_read_ + cfg.timeouts.body_idle;
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
    if (!request_ended_ && !refused_ && !answered_ && window_owed_ == 0 &&
        now >= last_read_ + cfg.timeouts.body_idle) {
        refuse(408);  // RFC 9110 15.5.9, as over HTTP/1
        return true;
    }
    if (sending_ && !source_waits_) {
        // The stream's own flow-control window holds it back (the connection's window is
        // h2_connection's to watch). A minimum rate, not "any progress": once stalled, the
        // stream must send http2.min_send_progress bytes within timeouts.write, or be granted
        // that much window, else it is reset. So a window opened a byte at a time (each byte
        // progress) ends within 2 x timeouts.write of the trickle's start.
        const auto window = nghttp2_session_get_stream_remote_window_size(connection_->raw(), id_);
        const auto need = static_cast<std::int64_t>(cfg.http2.min_send_progress);
        if (window >= need) {
            stalled_since_ = clock::time_point{};
        } else if (stalled_since_ == clock::time_point{} ||
                   progress_ - stalled_progress_ >= cfg.http2.min_send_progress) {
            stalled_since_ = now;
            stalled_progress_ = progress_;
        } else if (now >= stalled_since_ + cfg.timeouts.write) {
            reset(NGHTTP2_CANCEL);
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
            nghttp2_session_resume_data(connection_->raw(), id_);
        }
    }
    return true;
}

void h2_stream::stop() {
    // Blocking work that has not started is answered now (503).
    stop_deferred();
    // An endless stream (SSE) ends; its client reconnects elsewhere.
    if (source_ && source_->end_on_stop() && source_waits_) {
        source_waits_ = false;
        nghttp2_session_resume_data(connection_->raw(), id_);
    }
}

}  // namespace tern::detail

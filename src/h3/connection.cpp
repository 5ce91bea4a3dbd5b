// One HTTP/3 connection: see connection.hpp.

#include "h3/connection.hpp"

#include "h3/stream.hpp"
#include "http/stream_budget.hpp"

#include <tern/config.hpp>

#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <string_view>
#include <utility>

// Last: nghttp3's functions through the table that loads it on first use.
#include "h3/calls.hpp"

namespace tern::detail {

namespace {

std::string_view text(nghttp3_rcbuf* buf) noexcept {
    const auto v = nghttp3_rcbuf_get_buf(buf);
    return {reinterpret_cast<const char*>(v.base), v.len};
}

// A request stream: bidirectional and the client's (RFC 9000 2.1: the two low bits 00).
bool is_request(std::int64_t id) noexcept { return (id & 0x3) == 0; }

// How often the places of closed streams whose work still runs are looked at.
constexpr std::chrono::milliseconds work_poll{250};

}  // namespace

// nghttp3's callbacks, with the connection as conn_user_data and the stream (when there is
// one) as stream_user_data.
struct h3_connection::callbacks {
    static h3_connection& self(void* user_data) { return *static_cast<h3_connection*>(user_data); }
    static h3_stream* of(void* stream_user_data) {
        return static_cast<h3_stream*>(stream_user_data);
    }

    static int acked(nghttp3_conn* /*conn*/, std::int64_t /*id*/, std::uint64_t size,
                     void* /*user_data*/, void* stream_user_data) {
        if (auto* s = of(stream_user_data)) s->on_acked(size);
        return 0;
    }

    static int stream_close(nghttp3_conn* /*conn*/, std::int64_t id, std::uint64_t /*code*/,
                            void* user_data, void* stream_user_data) {
        auto& c = self(user_data);
        if (auto* s = of(stream_user_data)) s->on_close();
        c.streams_.erase(id);
        return 0;
    }

    static int data(nghttp3_conn* /*conn*/, std::int64_t /*id*/, const std::uint8_t* bytes,
                    std::size_t size, void* /*user_data*/, void* stream_user_data) {
        if (auto* s = of(stream_user_data)) {
            s->on_body({reinterpret_cast<const char*>(bytes), size});
        }
        return 0;
    }

    static int begin_headers(nghttp3_conn* conn, std::int64_t id, void* user_data,
                             void* stream_user_data) {
        auto& c = self(user_data);
        if (stream_user_data != nullptr) return 0;  // the trailers' section
        auto s = std::make_shared<h3_stream>(c, id, c.limits_, h3_stream::clock::now());
        if (!c.spares_.empty()) {
            s->take_buffers(c.spares_.back());
            c.spares_.pop_back();
        }
        nghttp3_conn_set_stream_user_data(conn, id, s.get());
        c.streams_.emplace(id, std::move(s));
        return 0;
    }

    static int field(nghttp3_conn* /*conn*/, std::int64_t /*id*/, std::int32_t /*token*/,
                     nghttp3_rcbuf* name, nghttp3_rcbuf* value, std::uint8_t /*flags*/,
                     void* /*user_data*/, void* stream_user_data) {
        if (auto* s = of(stream_user_data)) s->on_field(text(name), text(value), false);
        return 0;
    }

    static int trailer(nghttp3_conn* /*conn*/, std::int64_t /*id*/, std::int32_t /*token*/,
                       nghttp3_rcbuf* name, nghttp3_rcbuf* value, std::uint8_t /*flags*/,
                       void* /*user_data*/, void* stream_user_data) {
        if (auto* s = of(stream_user_data)) s->on_field(text(name), text(value), true);
        return 0;
    }

    static int end_headers(nghttp3_conn* /*conn*/, std::int64_t /*id*/, int fin, void* user_data,
                           void* stream_user_data) {
        if (auto* s = of(stream_user_data)) {
            s->on_head(fin != 0);
            self(user_data).queue_if_ready(*s);
        }
        return 0;
    }

    static int end_trailers(nghttp3_conn* /*conn*/, std::int64_t /*id*/, int /*fin*/,
                            void* /*user_data*/, void* /*stream_user_data*/) {
        return 0;  // the trailers were counted field by field; the request ends at end_stream
    }

    static int end_stream(nghttp3_conn* /*conn*/, std::int64_t /*id*/, void* user_data,
                          void* stream_user_data) {
        if (auto* s = of(stream_user_data)) {
            s->on_end();
            self(user_data).queue_if_ready(*s);
        }
        return 0;
    }

    static int stop_sending(nghttp3_conn* /*conn*/, std::int64_t id, std::uint64_t code,
                            void* user_data, void* /*stream_user_data*/) {
        self(user_data).stop_reading(id, code);
        return 0;
    }

    static int reset_stream(nghttp3_conn* /*conn*/, std::int64_t id, std::uint64_t code,
                            void* user_data, void* /*stream_user_data*/) {
        self(user_data).stop_writing(id, code);
        return 0;
    }

    static nghttp3_callbacks table() {
        nghttp3_callbacks cb{};
        cb.acked_stream_data = acked;
        cb.stream_close = stream_close;
        cb.recv_data = data;
        cb.begin_headers = begin_headers;
        cb.recv_header = field;
        cb.end_headers = end_headers;
        cb.begin_trailers = begin_headers;
        cb.recv_trailer = trailer;
        cb.end_trailers = end_trailers;
        cb.end_stream = end_stream;
        cb.stop_sending = stop_sending;
        cb.reset_stream = reset_stream;
        return cb;
    }
};

h3_connection::h3_connection(quic::stream_control& control, protocol_host& host,
                             std::string remote_ip, std::unordered_set<h3_connection*>& registry)
    : control_(control),
      host_(host),
      remote_ip_(std::move(remote_ip)),
      registry_(registry),
      cancels_(2 * host.settings().http3.max_concurrent_streams,
               host.settings().http3.max_concurrent_streams) {
    host.count_h3_connection();
    const auto& cfg = host.settings();
    limits_.max_header_count = cfg.limits.max_header_count;
    limits_.max_header_size = cfg.limits.max_header_size;
    limits_.max_line_size = cfg.limits.max_line_size;
    nghttp3_settings settings;
    nghttp3_settings_default(&settings);
    // No dynamic table either way (QPACK's static table and literals only): no stream
    // waits for another's encoder instructions, and a peer cannot make the decoder hold
    // state.
    settings.qpack_max_dtable_capacity = 0;
    settings.qpack_encoder_max_dtable_capacity = 0;
    settings.qpack_blocked_streams = 0;
    // What the limits let through, counted as RFC 9114 4.2.2 does (32 per field).
    settings.max_field_section_size = cfg.limits.max_line_size + cfg.limits.max_header_size +
                                      32 * (cfg.limits.max_header_count + 4);
    const auto cb = callbacks::table();
    if (nghttp3_conn_server_new(&conn_, &cb, &settings, nullptr, this) != 0) {
        throw std::runtime_error("tern: http3: nghttp3 cannot make a connection");
    }
    const auto control_id = control.open_uni_stream();
    const auto encoder_id = control.open_uni_stream();
    const auto decoder_id = control.open_uni_stream();
    if (control_id < 0 || encoder_id < 0 || decoder_id < 0 ||
        nghttp3_conn_bind_control_stream(conn_, control_id) != 0 ||
        nghttp3_conn_bind_qpack_streams(conn_, encoder_id, decoder_id) != 0) {
        nghttp3_conn_del(conn_);
        throw std::runtime_error("tern: http3: cannot open the control and QPACK streams");
    }
    registry_.insert(this);
    control.want_write();
}

h3_connection::~h3_connection() {
    *alive_ = false;
    registry_.erase(this);
    for (auto& [id, s] : streams_) {
        s->on_close();
        s->detach();
    }
    for (auto& s : ready_) s->detach();
    for (auto& s : waiting_) s->detach();
    for (auto& s : continues_) s->detach();
    for (auto& s : trailers_) s->detach();
    nghttp3_conn_del(conn_);
}

void h3_connection::queue_if_ready(h3_stream& s) {
    if (s.take_ready()) ready_.push_back(s.self());
}

void h3_connection::queue_continue(h3_stream& s) { continues_.push_back(s.self()); }

void h3_connection::queue_trailers(h3_stream& s) { trailers_.push_back(s.self()); }

namespace {

stream_budget h3_budget(const config& cfg) {
    return {cfg.http3.max_unacked, cfg.http3.max_open_files, cfg.http3.max_spooled_bytes};
}

}  // namespace

void h3_connection::admit() {
    // The handlers run after nghttp3 has returned, never inside its callbacks.
    waiting_.insert(waiting_.end(), ready_.begin(), ready_.end());
    ready_.clear();
    admit_streams(waiting_, streams_, h3_budget(host_.settings()), host_,
                  [](h3_stream& s) { s.reject(); });
}

bool h3_connection::may_open_file() {
    return open_files(streams_) < host_.settings().http3.max_open_files &&
           !host_.short_of_descriptors();
}

bool h3_connection::may_spool(const h3_stream& stream, std::uint64_t bytes) const {
    return may_spool_beside(streams_, stream, bytes, h3_budget(host_.settings()));
}

bool h3_connection::may_take_more(const h3_stream& stream) {
    return owed_.may_take_more(stream, streams_, host_.settings().http3.max_body_memory);
}

void h3_connection::settle_bodies() {
    owed_.settle(streams_, host_.settings().http3.max_body_memory);
}

bool h3_connection::on_stream_data(std::int64_t id, std::span<const std::uint8_t> bytes, bool fin) {
    const auto n = nghttp3_conn_read_stream(conn_, id, bytes.data(), bytes.size(), fin ? 1 : 0);
    if (n < 0) {
        // The error RFC 9114 names for it (H3_FRAME_UNEXPECTED, QPACK_DECOMPRESSION_FAILED,
        // ...), which the connection is closed with.
        failure_ = nghttp3_err_infer_quic_app_error_code(static_cast<int>(n));
        return false;
    }
    for (auto& s : std::exchange(continues_, {})) s->submit_continue();
    admit();
    settle_bodies();  // a body that spooled or ended lets others go on
    return true;
}

bool h3_connection::on_stream_reset(std::int64_t id) {
    nghttp3_conn_shutdown_stream_read(conn_, id);
    if (auto found = streams_.find(id); found != streams_.end()) found->second->on_peer_reset();
    // A request the client cancels before its answer is complete (acknowledged: the stream
    // is open) cost the server a stream's work, and a rapid reset (CVE-2023-44487) cancels
    // thousands a second, each opening the place of the next. Counted once per stream, as
    // RESET_STREAM and STOP_SENDING may both come; not when the server cancelled first.
    if (!is_request(id) || !cancelled_.insert(id).second) return true;
    if (cancels_.take(std::chrono::steady_clock::now())) return true;
    failure_ = NGHTTP3_H3_EXCESSIVE_LOAD;  // RFC 9114 8.1: the connection is closed with it
    return false;
}

void h3_connection::stop_reading(std::int64_t id, std::uint64_t code) {
    if (is_request(id)) cancelled_.insert(id);
    control_.shutdown_read(id, code);
}

void h3_connection::stop_writing(std::int64_t id, std::uint64_t code) {
    if (is_request(id)) cancelled_.insert(id);
    control_.shutdown_write(id, code);
}

void h3_connection::on_stream_close(std::int64_t id, std::uint64_t code) {
    std::shared_ptr<h3_stream> stream;
    if (auto found = streams_.find(id); found != streams_.end()) stream = found->second;
    const int rv = nghttp3_conn_close_stream(conn_, id, code);
    if (rv == NGHTTP3_ERR_STREAM_NOT_FOUND && stream) {
        // A stream nghttp3 never saw a header of (or closed already).
        stream->on_close();
        streams_.erase(id);
    }
    cancelled_.erase(id);
    admit();  // what the stream held is let go
    settle_bodies();
    if (!is_request(id)) return;
    if (!stream) {
        control_.release_stream(id);  // no request began on it
        return;
    }
    auto work = stream->work();
    // Only this function holds it: nothing reads its request or response again, so its
    // buffers serve the next stream (as HTTP/2's do, h2/connection).
    if (stream.use_count() == 1 && spares_.size() < max_spares) {
        stream->give_buffers(spares_.emplace_back());
    }
    stream.reset();
    release_when_done(id, std::move(work));
}

void h3_connection::release_when_done(std::int64_t id, stream_exchange::work_left work) {
    // The client may open another request stream once this one is closed and the work its
    // handler began has ended: a deferred job, a held answer (ctx.defer, a coroutine) or a
    // streamed body the application still holds keeps the place, so cancelling requests
    // does not let a client run more handlers at once than http3.max_concurrent_streams.
    if (work.ended()) {
        control_.release_stream(id);
        return;
    }
    places_.push_back({id, std::move(work)});
    if (polling_) return;
    const auto door = host_.door();
    if (!door) return;  // no loop (a test's): check() looks
    polling_ = true;
    door->after(work_poll, [this, alive = alive_](bool fired) {
        if (!*alive) return;
        polling_ = false;
        if (fired) poll_work();
    });
}

void h3_connection::poll_work() {
    auto waiting = std::exchange(places_, {});
    for (auto& p : waiting) release_when_done(p.id, std::move(p.work));
}

long h3_connection::next_write(std::int64_t& id, bool& fin, std::span<quic::stream_vec> vecs) {
    static_assert(sizeof(quic::stream_vec) == sizeof(nghttp3_vec));
    int end = 0;
    const auto n = nghttp3_conn_writev_stream(
        conn_, &id, &end, reinterpret_cast<nghttp3_vec*>(vecs.data()), vecs.size());
    fin = end != 0;
    // Trailers a streamed body's end found inside the read callback, now that nghttp3 has
    // returned: the stream is scheduled again for them.
    if (!trailers_.empty()) {
        for (auto& s : std::exchange(trailers_, {})) s->submit_trailers();
    }
    return static_cast<long>(n);
}

bool h3_connection::on_written(std::int64_t id, std::size_t n) {
    return nghttp3_conn_add_write_offset(conn_, id, n) == 0;
}

void h3_connection::on_write_blocked(std::int64_t id) { nghttp3_conn_block_stream(conn_, id); }

bool h3_connection::on_write_unblocked(std::int64_t id) {
    return nghttp3_conn_unblock_stream(conn_, id) == 0;
}

void h3_connection::on_write_shut(std::int64_t id) {
    nghttp3_conn_shutdown_stream_write(conn_, id);
}

void h3_connection::on_peer_stream_limit(std::uint64_t max_bidi) {
    // nghttp3 checks the stream IDs the client names (PRIORITY_UPDATE) against it.
    nghttp3_conn_set_max_client_streams_bidi(conn_, max_bidi);
}

bool h3_connection::on_acked(std::int64_t id, std::uint64_t n) {
    acked_ += n;
    if (nghttp3_conn_add_ack_offset(conn_, id, n) != 0) return false;
    if (!waiting_.empty()) admit();  // what was acknowledged is let go
    return true;
}

void h3_connection::check(std::chrono::steady_clock::time_point now) {
    // Copied: a check can answer or reset (and so close) streams.
    std::vector<std::shared_ptr<h3_stream>> open;
    open.reserve(streams_.size());
    for (auto& [id, s] : streams_) open.push_back(s);
    for (auto& s : open) s->check(now);
    check_send_rate(now);
    if (!waiting_.empty()) admit();
    settle_bodies();
    if (!polling_ && !places_.empty()) poll_work();
    // A connection that has had no stream since the last check (a second or two) keeps no
    // spare buffers: an idle connection holds no more than before they were kept.
    if (!streams_.empty()) {
        idle_checks_ = 0;
    } else if (++idle_checks_ >= 2 && !spares_.empty()) {
        std::vector<exchange_buffers>().swap(spares_);
    }
}

void h3_connection::check_send_rate(std::chrono::steady_clock::time_point now) {
    // Each stream is held to the rate on its own (h3_stream::check); the connection too, so
    // that answers begun one after another (each a new stream with a window of its own)
    // cannot stretch a stall: while some answer waits on the client, the client must
    // acknowledge http3.min_send_progress bytes of the connection's streams per
    // timeouts.write. The window starts again only on that progress, or when no answer
    // waits.
    const auto& cfg = host_.settings();
    std::vector<std::shared_ptr<h3_stream>> waiting;
    for (auto& [id, s] : streams_) {
        if (s->waits_on_client()) waiting.push_back(s);
    }
    if (waiting.empty() ||
        acked_ - window_acked_ >= std::max<std::size_t>(cfg.http3.min_send_progress, 1) ||
        window_start_ == std::chrono::steady_clock::time_point{}) {
        window_start_ = now;
        window_acked_ = acked_;
        return;
    }
    if (now < window_start_ + cfg.timeouts.write) return;
    for (auto& s : waiting) s->cancel_answer();
}

void h3_connection::on_closing() noexcept {
    if (closing_) return;
    closing_ = true;
    // RFC 9114 5.2: a GOAWAY that lets every request already sent finish.
    nghttp3_conn_submit_shutdown_notice(conn_);
    control_.want_write();
}

void h3_connection::stop() noexcept {
    on_closing();
    nghttp3_conn_shutdown(conn_);
    // Copied: a stop can answer (and so close) streams.
    std::vector<std::shared_ptr<h3_stream>> open;
    open.reserve(streams_.size());
    for (auto& [id, s] : streams_) open.push_back(s);
    for (auto& s : open) s->stop();
    control_.want_write();
}

}  // namespace tern::detail

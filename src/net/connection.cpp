#include "net/connection.hpp"

#include "http/buffers.hpp"
#include "http/error.hpp"
#include "http/status.hpp"
#include "http/writer.hpp"
#include "net/cancel_waits.hpp"
#include "net/worker.hpp"

#include <fcntl.h>
#include <sys/socket.h>

#include <asio/post.hpp>

#include <algorithm>
#include <cerrno>
#include <utility>

namespace tern::detail {

namespace {

// How long a refused connection (over the connection cap) may stall its 503.
constexpr std::chrono::milliseconds reject_write_timeout(2000);
// File bodies up to this size are read into the output buffer and go out with the headers
// (and with the other responses of a pipelined batch) in one send; larger ones are streamed
// with sendfile(2) after the headers.
constexpr std::uint64_t inline_file_bytes = std::uint64_t{16} * 1024;
// Responses to pipelined requests are written once they pass this size; the requests still
// in the read buffer are parsed after the write. The output buffer then stays near the size
// it keeps between requests (retained_buffer_capacity).
constexpr std::size_t batch_budget_bytes = retained_buffer_capacity;

}  // namespace

connection::connection(asio::ip::tcp::socket socket, worker& owner)
    : timer_(socket.get_executor()),
      owner_(owner),
      parser_(owner.limits()),
      write_timeout_(owner.settings().write_timeout) {
    std::error_code ec;
    socket.set_option(asio::ip::tcp::no_delay(true), ec);
    const auto peer = socket.remote_endpoint(ec);
    if (!ec && peer.data()->sa_family == AF_UNIX) {
        remote_ip_ = "unix";  // a Unix domain socket's peer (app::start_unix) has no address
    } else if (!ec) {
        // On a dual-stack listener an IPv4 client arrives as ::ffff:a.b.c.d: say a.b.c.d.
        const auto address = peer.address();
        remote_ip_ =
            address.is_v6() && address.to_v6().is_v4_mapped()
                ? asio::ip::make_address_v4(asio::ip::v4_mapped, address.to_v6()).to_string()
                : address.to_string();
    }
    // From here the socket is tern's: asio's reactor forgets it, the worker's poller watches
    // it. Reads, writes and file pieces are tried directly and wait only when the socket is
    // empty or full: all need a socket that never blocks.
    socket_ = file_handle(socket.release(ec));
    if (socket_ &&
        ::fcntl(socket_.get(), F_SETFL, ::fcntl(socket_.get(), F_GETFL) | O_NONBLOCK) == 0) {
        polled_ = owner_.poller().watch(socket_.get(), *this);
    }
}

connection::~connection() = default;

void connection::start(const std::shared_ptr<const tls_context>& tls, std::uint16_t redirect_port) {
    redirect_port_ = redirect_port;
    if (!polled_) {
        close();  // out of descriptors or memory for the poller: nothing can be served
        return;
    }
    // A client that connects and sends nothing is closed without an answer.
    accepted_at_ = clock::now();
    set_deadline(owner_.settings().first_byte_timeout, deadline_kind::idle);
    if (owner_.settings().proxy_protocol) {
        read_proxy_header(tls);
        return;
    }
    if (tls) {
        start_handshake(tls);
        return;
    }
    read();
}

void connection::reject() {
    if (!polled_) {
        close();
        return;
    }
    write_error_response(out_, 503, "Retry-After: 1\r\n");
    close_after_write_ = true;
    write_timeout_ = std::min(write_timeout_, reject_write_timeout);
    write();
}

void connection::stop_when_idle() {
    // Between requests, a connection whose next request has already arrived (unread in the
    // socket) is not idle: closing it would lose a request the client has sent (a proxy
    // cannot retry a POST). It is read and answered with Connection: close. So is a
    // connection just opened, whose first request is on its way: it gets a short wait.
    if (phase_ == phase::handshaking) {
        close();
    } else if (phase_ == phase::reading && !parser_.in_progress() && !request_waiting()) {
        if (served_ != 0 || tls_) {
            close();
        } else {
            set_deadline(std::min<clock::duration>(owner_.settings().first_byte_timeout,
                                                   first_request_wait_at_stop),
                         deadline_kind::idle);
        }
    }
    // A request waiting for a blocking handler that has not started is answered now (503);
    // one whose handler runs is answered when it returns.
    if (phase_ == phase::waiting) take_back(true);
    // An endless stream (SSE) ends now; its clients reconnect elsewhere. Another stream runs
    // on until the drain deadline, like any request in progress.
    if (stream_ && stream_->end_on_stop() && phase_ == phase::streaming) pull_stream();
    // Otherwise the request in progress is answered with Connection: close (answer() sees
    // the worker stopping) and the connection closes after that write.
}

bool connection::request_waiting() noexcept {
    if (!input_.empty()) return true;
    char byte = 0;
    return ::recv(socket_.get(), &byte, 1, MSG_PEEK | MSG_DONTWAIT) > 0;
}

void connection::close() noexcept {
    if (phase_ == phase::closed) return;
    phase_ = phase::closed;
    // Work not started for a request that can no longer be answered never runs. Taken back
    // before the socket closes, so that it is gone once the client sees the close.
    take_back(false);
    if (handshake_counted_) end_handshake(false, nullptr);  // the client left, or timed out
    if (tls_) tls_->shutdown();  // close_notify, if the session can still send one
    // A held response or a streamed body is told that nothing more reaches the client.
    if (auto link = std::exchange(held_, nullptr)) link->abandon();
    end_stream();
    cancel_waits(timer_);
    if (polled_) {
        owner_.poller().forget(socket_.get(), *this);
        polled_ = false;
    }
    stop_reading();
    cancel_ready(ready::write);
    socket_.reset();
    owner_.forget(this);
}

// ---- reading -----------------------------------------------------------------------------

void connection::end_request() noexcept {
    // After a 101 no HTTP follows: the head's buffers go back.
    if (upgrade_) {
        parser_.release();
    } else {
        parser_.next();
    }
}

void connection::read() {
    if (reading_) return;
    reading_ = true;
    if (input_.empty() && spill_.capacity() != 0) std::string().swap(spill_);
    if (tls_) {
        // OpenSSL may hold decrypted bytes already, whatever the socket has: they are read
        // in a handler of their own, so that a read never completes inside its own call.
        asio::post(timer_.get_executor(), [self = shared_from_this()] {
            if (self->reading_ && self->phase_ != phase::closed) self->tls_read();
        });
        return;
    }
    // Nothing is tried now: after a response the next request has almost never arrived,
    // and a read would fail. The poller tells of the next arrival.
    when_ready(ready::read, &connection::read_now);
}

void connection::read_now() {
    reading_ = false;
    const auto buffer = owner_.read_buffer();
    ssize_t n = 0;
    do {
        n = ::recv(socket_.get(), buffer.data(), buffer.size(), 0);
    } while (n < 0 && errno == EINTR);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
        can_read_ = ended_;
        reading_ = true;
        when_ready(ready::read, &connection::read_now);
        return;
    }
    // A short read emptied the socket: the next arrival is told again. The peer's end is no
    // arrival: once told, every later read finds it.
    if (n >= 0 && static_cast<std::size_t>(n) < buffer.size()) can_read_ = ended_;
    std::error_code ec;
    if (n < 0) {
        ec.assign(errno, std::system_category());
    } else if (n == 0) {
        ec = asio::error::eof;
    }
    on_read(ec, n > 0 ? static_cast<std::size_t>(n) : 0);
    keep_unparsed();
}

void connection::stop_reading() noexcept {
    reading_ = false;
    cancel_ready(ready::read);
}

void connection::keep_unparsed() {
    if (input_.empty()) return;
    const auto buffer = owner_.read_buffer();
    const std::less<const char*> before;
    if (before(input_.data(), buffer.data()) ||
        !before(input_.data(), buffer.data() + buffer.size())) {
        return;  // in spill_ already
    }
    spill_.assign(input_);
    input_ = spill_;
}

// ---- readiness ---------------------------------------------------------------------------

void connection::waiters::add(ready_fn fn) noexcept {
    if (first == nullptr || first == fn) {
        first = fn;
    } else {
        second = fn;
    }
}

void connection::waiters::run(connection& c) {
    const auto one = std::exchange(first, nullptr);
    const auto two = std::exchange(second, nullptr);
    if (one != nullptr) (c.*one)();
    if (two != nullptr && c.phase_ != phase::closed) (c.*two)();
}

void connection::when_ready(ready what, ready_fn fn) {
    (what == ready::read ? on_readable_ : on_writable_).add(fn);
    if (!ready_hold_) ready_hold_ = shared_from_this();
    if (what == ready::read ? can_read_ : can_write_) {
        asio::post(timer_.get_executor(), [self = ready_hold_] { self->run_ready(); });
    }
}

void connection::cancel_ready(ready what) noexcept {
    (what == ready::read ? on_readable_ : on_writable_) = waiters{};
    // Let go on a later turn of the loop: the caller may know this connection by a plain
    // pointer only (the worker's list at a stop).
    if (on_readable_.empty() && on_writable_.empty() && ready_hold_) {
        asio::post(timer_.get_executor(), [keep = std::move(ready_hold_)] {});
    }
}

void connection::on_ready(bool readable, bool writable, bool ended) {
    can_read_ = can_read_ || readable;
    can_write_ = can_write_ || writable;
    ended_ = ended_ || ended;
    run_ready();
}

void connection::run_ready() {
    auto self = ready_hold_;  // alive through the calls, whatever they do
    if (can_read_ && !on_readable_.empty()) on_readable_.run(*this);
    if (can_write_ && !on_writable_.empty() && phase_ != phase::closed) on_writable_.run(*this);
    if (on_readable_.empty() && on_writable_.empty()) ready_hold_.reset();
}

void connection::on_read(std::error_code ec, std::size_t n) {
    reading_ = false;
    owner_.count_received(n);
    if (upgrade_ && phase_ != phase::closed) {
        on_upgraded_read(ec, n);
        return;
    }
    switch (phase_) {
        case phase::handshaking:
            return;
        case phase::reading:
            if (ec) {
                close();  // the peer went away (or reset); there is nobody to answer
            } else {
                process(n);
            }
            return;
        case phase::lingering:
            // Discard what the client still sends until it closes or the linger time ends.
            // An aborted read is the one a 408 cancelled; keep lingering after it.
            if (ec && ec != asio::error::operation_aborted) {
                close();
            } else {
                read();
            }
            return;
        case phase::writing:
        case phase::waiting:
        case phase::streaming:
        case phase::closed:
            return;
    }
}

void connection::process(std::size_t n) {
    input_ = std::string_view(owner_.read_buffer().data(), n);
    if (h2_preface_arrived()) {
        start_h2();  // h2c with prior knowledge
        return;
    }
    consume_input();
}

void connection::consume_input() {
    const auto now = clock::now();
    // A file body goes out before any later response, and responses are written once they
    // pass the batch budget (a few bytes of requests can ask for many large responses): the
    // rest of the input waits (in spill_ once this handler returns; no read happens until
    // it is consumed) and is parsed after the write. Nothing after a closing request is
    // processed.
    while (!input_.empty() && !close_after_write_ && !pending_file_.file && !stream_ &&
           out_.size() <= batch_budget_bytes) {
        const bool was_idle = !parser_.in_progress();
        const auto r = parser_.feed(input_);
        input_.remove_prefix(r.consumed);
        if (was_idle && parser_.in_progress()) head_started_ = now;
        if (r.what == request_parser::event::request) {
            answer(parser_.current());
            if (deferred_) {
                // Answered later (resume()); what is left of the input waits in spill_.
                // The responses before it go out now; then nothing is read and no deadline
                // runs until it resumes.
                if (!out_.empty()) {
                    write();
                } else {
                    wait_for_resume();
                }
                return;
            }
            end_request();
        } else if (r.what == request_parser::event::error) {
            fail(parser_.error());
            break;
        }
    }
    if (!close_after_write_ && parser_.wants_continue()) {
        write_continue(out_);
        parser_.continue_sent();
    }
    if (!out_.empty() || pending_file_.file || stream_) {
        write();
        return;
    }
    set_read_deadline();
    phase_ = phase::reading;
    read();
}

void connection::set_read_deadline() {
    // The deadline follows the request in progress, whatever ran before this read (a
    // write of earlier responses or of 100 Continue, a deferred handler): its body's idle
    // timeout once the headers are complete, else the header deadline from its first byte.
    // Between requests the current deadline stands (keep-alive idle or first byte).
    const auto& cfg = owner_.settings();
    if (parser_.reading_body()) {
        set_deadline(cfg.body_idle_timeout, deadline_kind::body);
    } else if (parser_.in_progress()) {
        set_deadline_at(head_started_ + cfg.header_timeout, deadline_kind::header);
    }
}

void connection::answer(request& req) {
    ++served_;
    owner_.count_request();
    deferred_ = false;
    mark_transport(req);
    if (redirect_port_ != 0) {
        redirect_to_https(req);
        finish_answer(req);
        return;
    }
    owner_.handler().handle(req, response_, remote_ip_, *this, owner_.app_state());
    if (!deferred_) finish_answer(req);
}

void connection::finish_answer(request& req) {
    const auto limit = owner_.settings().max_requests_per_connection;
    const bool close = !req.keep_alive || response_.close || owner_.closing_connections() ||
                       (limit != 0 && served_ >= limit);
    if (response_.upgrade && response_.status == 101) {
        start_upgrade();
        return;
    }
    framing how;
    how.omit_body = req.is_head;
    how.close = close;
    how.keep_alive_1_0 = !close && req.version_minor == 0;
    if (response_.source) {
        // A streamed body: chunks on HTTP/1.1; on HTTP/1.0 the close ends it. A HEAD, 204 or
        // 304 gets the head alone, and the source is told at once that nothing is sent.
        const bool body = !req.is_head && !status_forbids_body(response_.status);
        how.chunked = req.version_minor != 0;
        if (body && !how.chunked) {
            how.close = true;
            how.keep_alive_1_0 = false;
        }
        write_response(out_, response_, how);
        stream_ = std::move(response_.source);
        response_.clear();
        if (how.close) close_after_write_ = true;
        if (body) {
            start_stream(how.chunked);
        } else {
            end_stream();
        }
        return;
    }
    const std::size_t head_at = out_.size();
    write_response(out_, response_, how);
    if (response_.file.file && !req.is_head && response_.file.length != 0) {
        if (response_.file.length > inline_file_bytes ||
            out_.size() + response_.file.length > batch_budget_bytes) {
            pending_file_ = std::move(response_.file);
        } else if (!append_file(response_.file)) {
            // The file could not be read whole (an I/O error, or it shrank since fstat): a
            // clean 500 instead of a body shorter than its Content-Length.
            out_.resize(head_at);
            write_error_response(out_, 500);
            close_after_write_ = true;
        }
    }
    response_.clear();  // frees a large body at once; closes a file sent inline or a HEAD's
    if (close) close_after_write_ = true;
}

bool connection::append_file(const file_body& f) {
    const std::size_t at = out_.size();
    const auto length = static_cast<std::size_t>(f.length);
    out_.resize(at + length);
    std::size_t done = 0;
    while (done < length) {
        const ssize_t n = ::pread(f.file.get(), out_.data() + at + done, length - done,
                                  static_cast<off_t>(f.offset + done));
        if (n > 0) {
            done += static_cast<std::size_t>(n);
        } else if (n < 0 && errno == EINTR) {
            continue;
        } else {
            out_.resize(at);
            return false;
        }
    }
    return true;
}

void connection::fail(std::error_code why) {
    owner_.count_request();
    // The application may shape the error (app.error(status)) and the request logger sees
    // it: both get what of the request was parsed (the request line once it arrived
    // whole, and the header fields complete by then).
    request& req = parser_.parsed_so_far();
    mark_transport(req);
    const auto kind = static_cast<error>(why.value());
    owner_.handler().handle_failure(req, status_of(kind), failure_message(kind), response_,
                                    remote_ip_, owner_.app_state());
    framing how;
    how.omit_body = req.is_head;
    how.close = true;
    write_response(out_, response_, how);
    response_.clear();
    close_after_write_ = true;
}

// ---- deadlines ---------------------------------------------------------------------------

void connection::set_deadline(clock::duration after, deadline_kind kind) {
    set_deadline_at(clock::now() + after, kind);
}

void connection::set_deadline_at(clock::time_point when, deadline_kind kind) {
    deadline_ = when;
    deadline_kind_ = kind;
    if (timer_armed_ && timer_at_ <= when) return;  // on_timer moves it on when it fires
    timer_armed_ = true;
    timer_at_ = when;
    timer_.expires_at(when);
    auto self = shared_from_this();
    timer_.async_wait([self](std::error_code ec) { self->on_timer(ec); });
}

void connection::on_timer(std::error_code ec) {
    if (ec == asio::error::operation_aborted || phase_ == phase::closed) return;
    timer_armed_ = false;
    if (clock::now() < deadline_) {
        set_deadline_at(deadline_, deadline_kind_);
        return;
    }
    on_deadline();
}

void connection::on_deadline() {
    switch (deadline_kind_) {
        case deadline_kind::none:
            return;
        case deadline_kind::header:
        case deadline_kind::body:
            if (phase_ != phase::reading) return;
            // RFC 9110 15.5.9: 408 tells the client the server gave up waiting.
            fail(deadline_kind_ == deadline_kind::header ? error::header_timeout
                                                         : error::body_timeout);
            {
                stop_reading();  // the outstanding read
            }
            write();
            return;
        case deadline_kind::idle:
        case deadline_kind::write:
        case deadline_kind::linger:
        case deadline_kind::handshake:
            close();
            return;
        case deadline_kind::stream_idle:
            if (phase_ != phase::streaming || !stream_) return;
            stream_->on_idle();  // e.g. an SSE keep-alive comment
            pull_stream();
            return;
    }
}

}  // namespace tern::detail

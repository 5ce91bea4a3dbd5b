#include "client/call.hpp"

#include "http/request.hpp"
#include "http/token.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include "platform/files.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

namespace tern::detail {

namespace {

constexpr std::size_t read_size = 16 * 1024;
constexpr std::size_t file_piece = 64 * 1024;
// Interim responses (100, 103) allowed before the final one: each is bounded by the head
// limits, and this bounds how many a server may send.
constexpr int max_interim_heads = 32;

// RFC 9110 9.2.2: a request that can be sent again without harm when a reused connection
// turned out to be closed before any byte of its response.
bool idempotent(std::string_view method) {
    return method == "GET" || method == "HEAD" || method == "PUT" || method == "DELETE" ||
           method == "OPTIONS" || method == "TRACE";
}

bool sendable(std::string_view s) {
    return s.find_first_of(std::string_view("\r\n\0", 3)) == std::string_view::npos;
}

bool is_redirect(int status) {
    return status == 301 || status == 302 || status == 303 || status == 307 || status == 308;
}

response_limits limits_of(const client_options& o, std::uint64_t max_body) {
    response_limits l;
    l.max_line_size = o.max_response_line;
    l.max_header_size = o.max_response_header_size;
    l.max_header_count = o.max_response_headers;
    l.max_body_size = max_body;
    return l;
}

// Whether following this redirect sends the request's body again (RFC 9110 15.4: 303 turns
// it into a GET, and so do 301 and 302 for a POST, as browsers do).
bool keeps_body(int status, std::string_view method) {
    return !((status == 303 && method != "HEAD") ||
             ((status == 301 || status == 302) && method == "POST"));
}

// The chunk size line of a piece of `n` bytes, after the last piece's closing CRLF.
void chunk_head(std::string& out, std::size_t n, bool first) {
    char hex[24];
    int len = 0;
    std::size_t v = n;
    do {
        const auto digit = static_cast<int>(v % 16);
        hex[len++] = static_cast<char>(digit < 10 ? '0' + digit : 'a' + digit - 10);
        v /= 16;
    } while (v != 0);
    if (!first) out += "\r\n";
    while (len > 0) out += hex[--len];
    out += "\r\n";
}

client_failure failure_of(response_error e) {
    switch (e) {
        case response_error::line_too_long:
        case response_error::header_too_large:
        case response_error::too_many_headers:
        case response_error::body_too_large:
            return client_failure::response_too_large;
        case response_error::truncated:
            return client_failure::closed_early;
        default:
            return client_failure::bad_response;
    }
}

}  // namespace

client_call::client_call(const std::shared_ptr<client_shared>& shared, client_request request)
    : client_call(shared, std::move(request), shared->options.max_response_body) {}

client_call::client_call(std::shared_ptr<client_shared> shared, client_request request,
                         std::uint64_t max_body)
    : shared_(std::move(shared)),
      request_(std::move(request)),
      parser_(limits_of(shared_->options, max_body)),
      started_(clock::now()) {
    if (shared_->options.total_timeout.count() > 0) {
        total_deadline_ = started_ + shared_->options.total_timeout;
    }
}

client_call::clock::time_point client_call::bound(std::chrono::milliseconds timeout) const {
    if (timeout.count() <= 0) return total_deadline_;
    return std::min(clock::now() + timeout, total_deadline_);
}

bool client_call::step(wait_for& next) {
    for (;;) {
        bool go_on = true;
        switch (phase_) {
            case phase::start:
                begin();
                break;
            case phase::connect:
                go_on = connecting(next);
                break;
            case phase::handshake:
                go_on = handshaking(next);
                break;
            case phase::send:
                go_on = sending(next);
                break;
            case phase::receive:
                go_on = receiving(next);
                break;
            case phase::done:
                return true;
        }
        if (!go_on) return false;
    }
}

void client_call::fail(client_failure why, std::string message) {
    if (phase_ == phase::done) return;
    result.failure = why;
    result.message = std::move(message);
    drop_connection();
    phase_ = phase::done;
}

void client_call::drop_connection() noexcept { conn_.reset(); }

void client_call::timed_out() {
    fail(client_failure::timed_out,
         std::string(phase_name_) + " timed out (" + url_.where.authority() + ")");
}

void client_call::cancel() {
    fail(client_failure::cancelled, "cancelled: the caller left or the server is stopping");
}

// ---- the request ---------------------------------------------------------------------

void client_call::begin() {
    auto parsed = parse_url(request_.url);
    if (!parsed) {
        fail(client_failure::bad_request, "not an absolute http(s) URL: " + request_.url);
        return;
    }
    url_ = std::move(*parsed);
    if (request_.method.empty() || !is_token(request_.method)) {
        fail(client_failure::bad_request, "not a method: " + request_.method);
        return;
    }
    out_ = request_.method + ' ' + url_.target + " HTTP/1.1\r\n";
    bool has_host = false;
    for (const auto& [name, value] : request_.headers) {
        if (name.empty() || !is_token(name) || !sendable(value)) {
            fail(client_failure::bad_request, "a header that cannot be sent: " + name);
            return;
        }
        if (iequals(name, "content-length") || iequals(name, "transfer-encoding")) {
            fail(client_failure::bad_request,
                 name + " is the client's to write (from the body it sends)");
            return;
        }
        has_host = has_host || iequals(name, "host");
    }
    if (!has_host) out_ += "Host: " + url_.where.authority() + "\r\n";
    for (const auto& [name, value] : request_.headers) out_ += name + ": " + value + "\r\n";
    if (!open_body_file()) return;
    file_at_ = 0;
    file_left_ = file_size_;
    feed_.reset();
    stream_ended_ = false;
    stream_taken_ = 0;
    const bool chunked = request_.body_stream && !request_.body_stream_size;
    if (request_.body_stream) {
        if (file_size_ > 0 || !request_.body_file.empty() || request_.body_fd >= 0) {
            fail(client_failure::bad_request, "body_stream with body_file or body_fd");
            return;
        }
        feed_ = std::make_shared<stream_feed>();
        feed_->chunked = chunked;
    }
    if (chunked) {
        out_ += "Transfer-Encoding: chunked\r\n\r\n";
        if (!request_.body.empty()) {
            chunk_head(out_, request_.body.size(), true);
            out_ += request_.body;
            feed_->first_chunk = false;  // the next chunk closes this one first
        }
    } else {
        const std::uint64_t length =
            request_.body.size() + file_size_ + request_.body_stream_size.value_or(0);
        // A body, or a method whose request carries one even when empty (RFC 9110 8.6).
        if (length > 0 || request_.method == "POST" || request_.method == "PUT" ||
            request_.method == "PATCH" || request_.body_stream) {
            out_ += "Content-Length: " + std::to_string(length) + "\r\n";
        }
        out_ += "\r\n";
        out_ += request_.body;
    }
    out_at_ = 0;
    parser_.expect(request_.method == "HEAD");
    got_byte_ = false;
    final_head_ = false;
    interim_heads_ = 0;
    discarding_ = false;
    result.response = {};
    if (in_.size() != read_size) in_.resize(read_size);
    open_connection();
}

bool client_call::open_body_file() {
    file_size_ = 0;
    body_fd_ = -1;
    if (!request_.body_file.empty() && request_.body_fd >= 0) {
        fail(client_failure::bad_request, "body_file and body_fd are both set");
        return false;
    }
    if (!request_.body_file.empty()) {
        body_file_ = file_handle(platform::open_read_only(request_.body_file.c_str()));
        body_fd_ = body_file_.get();
    } else if (request_.body_fd >= 0) {
        body_fd_ = request_.body_fd;
    } else {
        return true;
    }
    struct stat st {};
    const bool readable = body_fd_ >= 0 && ::fstat(body_fd_, &st) == 0;
    if (!readable || !S_ISREG(st.st_mode)) {
        const std::string name = request_.body_file.empty()
                                     ? "body_fd " + std::to_string(request_.body_fd)
                                     : request_.body_file;
        fail(client_failure::bad_request,
             "the body file cannot be read: " + name + ": " +
                 (readable ? "not a regular file" : std::strerror(errno)));
        return false;
    }
    file_size_ = static_cast<std::uint64_t>(st.st_size);
    return true;
}

void client_call::open_connection() {
    if (!retried_) conn_ = shared_->take(url_.where);
    if (conn_) {
        reused_ = true;
        phase_ = phase::send;
        phase_name_ = "sending the request";
        deadline_ = bound(shared_->options.write_timeout);
        return;
    }
    reused_ = false;
    std::string error;
    addresses_ = shared_->resolve(url_.where.host, url_.where.port, error);
    if (addresses_.empty()) {
        fail(client_failure::resolve_failed, error);
        return;
    }
    next_address_ = 0;
    connect_error_.clear();
    phase_name_ = "connect";
    deadline_ = bound(shared_->options.connect_timeout);
    try_next_address();
}

bool client_call::try_next_address() {
    while (next_address_ < addresses_.size()) {
        const auto& a = addresses_[next_address_++];
        conn_ = std::make_unique<upstream>(url_.where);
        const auto r = conn_->connect(reinterpret_cast<const sockaddr*>(&a.address), a.length);
        if (r.what == upstream::status::failed) {
            connect_error_ = conn_->error();
            continue;
        }
        phase_ = phase::connect;
        return true;
    }
    fail(client_failure::connect_failed,
         "cannot connect to " + url_.where.authority() + ": " + connect_error_);
    return false;
}

bool client_call::connecting(wait_for& next) {
    const auto r = conn_->connected();
    if (r.what == upstream::status::want_write) return wait(next, r.what, deadline_);
    if (r.what == upstream::status::failed) {
        connect_error_ = conn_->error();
        try_next_address();
        return true;
    }
    if (url_.where.https) {
        phase_ = phase::handshake;
        phase_name_ = "TLS handshake";
        return true;  // within the connect timeout
    }
    phase_ = phase::send;
    phase_name_ = "sending the request";
    deadline_ = bound(shared_->options.write_timeout);
    return true;
}

bool client_call::handshaking(wait_for& next) {
    std::shared_ptr<const tls_client_context> context;
    try {
        context = shared_->tls();
    } catch (const std::invalid_argument& e) {
        fail(client_failure::tls_failed, e.what());
        return true;
    }
    const auto r = conn_->handshake(context);
    switch (r.what) {
        case upstream::status::done:
            phase_ = phase::send;
            phase_name_ = "sending the request";
            deadline_ = bound(shared_->options.write_timeout);
            return true;
        case upstream::status::want_read:
        case upstream::status::want_write:
            return wait(next, r.what, deadline_);
        case upstream::status::closed:
        case upstream::status::failed:
            break;
    }
    fail(client_failure::tls_failed,
         "TLS handshake with " + url_.where.authority() + " failed: " + conn_->error());
    return true;
}

bool client_call::sending(wait_for& next) {
    for (;;) {
        while (out_at_ < out_.size()) {
            const auto r = conn_->write(out_.data() + out_at_, out_.size() - out_at_);
            switch (r.what) {
                case upstream::status::done:
                    out_at_ += r.n;
                    deadline_ = bound(shared_->options.write_timeout);  // progress
                    break;
                case upstream::status::want_read:
                case upstream::status::want_write:
                    return wait(next, r.what, deadline_);
                case upstream::status::closed:
                case upstream::status::failed:
                    if (retry_on_fresh()) return true;
                    fail(client_failure::closed_early,
                         "the connection closed while the request was being sent");
                    return true;
            }
        }
        if (file_left_ > 0) {
            if (!fill_from_file()) return true;
            continue;
        }
        if (!feed_ || stream_ended_) break;
        if (!fill_from_stream(next)) return phase_ == phase::done;
    }
    phase_ = phase::receive;
    phase_name_ = "waiting for the response";
    deadline_ = bound(shared_->options.response_timeout);
    return true;
}

bool client_call::fill_from_file() {
    const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(file_left_, file_piece));
    out_.resize(n);
    ssize_t got = 0;
    do {
        got = platform::read_file_at(body_fd_, out_.data(), n, file_at_);
    } while (got < 0 && errno == EINTR);
    if (got <= 0) {
        fail(client_failure::bad_request, "the body file could not be read to its end");
        return false;
    }
    out_.resize(static_cast<std::size_t>(got));
    out_at_ = 0;
    file_at_ += static_cast<std::uint64_t>(got);
    file_left_ -= static_cast<std::uint64_t>(got);
    return true;
}

namespace {

// The callback given to the reader: fires the call's gate once, when called or when the
// reader lets it go uncalled (which ends the call, cancelled).
struct piece_token {
    std::shared_ptr<pause_gate> gate;
    explicit piece_token(std::shared_ptr<pause_gate> g) : gate(std::move(g)) {}
    piece_token(const piece_token&) = delete;
    piece_token& operator=(const piece_token&) = delete;
    ~piece_token() { gate->fire(true); }
};

}  // namespace

// False when the call waits for the reader (next.fd -1) or has ended; true when out_ holds
// what to send next (the piece, or the body's end).
bool client_call::fill_from_stream(wait_for& next) {
    if (!gate_) ask_piece();
    {
        std::lock_guard lock(gate_->mutex);
        if (gate_->dropped) {
            fail(client_failure::cancelled, "cancelled: the body_stream reader went away");
            return false;
        }
        if (!gate_->resumed) {
            next.fd = platform::invalid_socket;  // the reader's callback takes the next step
            return false;
        }
    }
    gate_.reset();
    take_piece();
    return phase_ != phase::done;
}

void client_call::ask_piece() {
    gate_ = std::make_shared<pause_gate>();
    auto token = std::make_shared<piece_token>(gate_);
    auto feed = feed_;
    feed->frame.clear();
    // Called on the loop: at once when the piece is there, else when it arrives.
    request_.body_stream->next(
        [feed, token](std::optional<std::string_view> piece, std::error_code ec) {
            if (piece) {
                if (!piece->empty()) {
                    if (feed->chunked) {
                        chunk_head(feed->frame, piece->size(), feed->first_chunk);
                        feed->first_chunk = false;
                    }
                    feed->frame.append(*piece);
                    feed->size += piece->size();
                }
            } else if (ec) {
                feed->failure = ec;
            } else {
                feed->ended = true;
            }
            token->gate->fire(false);
        });
}

void client_call::take_piece() {
    auto& feed = *feed_;
    if (feed.failure) {
        const auto why = feed.failure;
        if (why == body_failure::idle) {
            fail(client_failure::timed_out, "the body_stream reader timed out: " + why.message());
        } else if (why == body_failure::too_large) {
            fail(client_failure::bad_request, "the body_stream reader failed: " + why.message());
        } else {
            fail(client_failure::cancelled,
                 "cancelled: the body_stream reader failed: " + why.message());
        }
        return;
    }
    stream_taken_ = feed.size;
    deadline_ = bound(shared_->options.write_timeout);  // it did not run while waiting
    const auto limit = request_.body_stream_size;
    if (limit && stream_taken_ > *limit) {
        fail(client_failure::bad_request, "the body_stream gave more than body_stream_size (" +
                                              std::to_string(*limit) + " bytes)");
        return;
    }
    if (feed.ended) {
        stream_ended_ = true;
        if (limit && stream_taken_ < *limit) {
            fail(client_failure::body_stream_short, "the body_stream ended after " +
                                                        std::to_string(stream_taken_) + " of " +
                                                        std::to_string(*limit) + " bytes");
            return;
        }
        if (feed.chunked) feed.frame += feed.first_chunk ? "0\r\n\r\n" : "\r\n0\r\n\r\n";
    }
    out_.swap(feed.frame);
    out_at_ = 0;
}

// ---- the response --------------------------------------------------------------------

bool client_call::receiving(wait_for& next) {
    for (;;) {
        if (gate_) {
            std::lock_guard lock(gate_->mutex);
            if (gate_->dropped) {
                fail(client_failure::cancelled, "cancelled: the body's resume was dropped");
                return true;
            }
            if (!gate_->resumed) {
                next.fd = platform::invalid_socket;  // paused: the driver waits for the gate
                return false;
            }
        }
        if (gate_) {
            gate_.reset();
            deadline_ = bound(shared_->options.read_timeout);  // it did not run while paused
        }
        const auto r = conn_->read(in_.data(), in_.size());
        switch (r.what) {
            case upstream::status::done:
                got_byte_ = true;
                if (!on_bytes(r.n)) return true;
                break;
            case upstream::status::want_read:
            case upstream::status::want_write:
                return wait(next, r.what, deadline_);
            case upstream::status::closed:
            case upstream::status::failed: {
                if (!got_byte_ && retry_on_fresh()) return true;
                const auto end = parser_.finish();
                if (end.what == response_parser::event::complete && take_body()) {
                    finish_response(false);
                } else if (end.what != response_parser::event::complete) {
                    fail(failure_of(parser_.error()), std::string(describe(parser_.error())) +
                                                          " (" + url_.where.authority() + ")");
                }
                return true;
            }
        }
    }
}

// False when the call ended (or moved on) with these bytes.
bool client_call::on_bytes(std::size_t n) {
    std::string_view data(in_.data(), n);
    // After a head the parser is fed on even with nothing left: a response without a body
    // (HEAD, 204, 304, Content-Length: 0) completes on that call.
    for (bool more = true; more;) {
        const auto r = parser_.feed(data);
        data.remove_prefix(r.consumed);
        more = false;
        switch (r.what) {
            case response_parser::event::need_more:
                break;
            case response_parser::event::head:
                if (parser_.head().status < 200 && ++interim_heads_ > max_interim_heads) {
                    fail(client_failure::bad_response,
                         "more than 32 interim (1xx) responses (" + url_.where.authority() + ")");
                    return false;
                }
                if (parser_.head().status >= 200) take_head();
                if (phase_ == phase::done) return false;  // the head's callback ended it
                more = true;
                break;
            case response_parser::event::complete:
                if (take_body()) finish_response(data.empty() && parser_.keep_alive());
                return false;
            case response_parser::event::error:
                fail(failure_of(parser_.error()),
                     std::string(describe(parser_.error())) + " (" + url_.where.authority() + ")");
                return false;
        }
    }
    if (!take_body()) return false;
    if (final_head_) deadline_ = bound(shared_->options.read_timeout);  // progress
    return true;
}

void client_call::take_head() {
    const auto& head = parser_.head();
    auto& res = result.response;
    res.status = head.status;
    res.reason = std::string(head.reason);
    res.headers.clear();
    for (const auto& f : head.headers) res.headers.emplace_back(f.name, f.value);
    final_head_ = true;
    // A redirect that will be followed: its body is nobody's.
    const auto location = res.header("location");
    discarding_ = is_redirect(res.status) && redirects_ < shared_->options.max_redirects &&
                  location && resolve_location(url_, *location).has_value();
    // A body read from a reader cannot be sent twice.
    if (request_.body_stream && keeps_body(res.status, request_.method)) discarding_ = false;
    phase_name_ = "reading the response body";
    deadline_ = bound(shared_->options.read_timeout);
    if (discarding_ || !request_.on_head) return;
    bool go_on = false;
    try {
        go_on = request_.on_head(res);
    } catch (const std::exception& e) {
        fail(client_failure::aborted, std::string("the head's callback threw: ") + e.what());
        return;
    }
    if (!go_on) fail(client_failure::aborted, "the head's callback stopped the call");
}

bool client_call::take_body() {
    auto& bytes = parser_.body();
    if (bytes.empty()) return true;
    if (discarding_) {
        bytes.clear();
        return true;
    }
    if (!request_.on_body) {
        result.response.body.append(bytes);
        bytes.clear();
        return true;
    }
    bool go_on = false;
    try {
        go_on = request_.on_body(bytes);
    } catch (const std::exception& e) {
        // The sink is the application's: what it throws ends this call, not the loop.
        fail(client_failure::aborted, std::string("the body's sink threw: ") + e.what());
        return false;
    }
    bytes.clear();
    if (!go_on) {
        fail(client_failure::aborted, "the body's sink stopped the call");
        return false;
    }
    if (request_.pace) ask_pace();
    return phase_ != phase::done;
}

void pause_gate::fire(bool was_dropped) {
    std::function<void()> next;
    {
        std::lock_guard lock(mutex);
        if (resumed || dropped) return;
        (was_dropped ? dropped : resumed) = true;
        next = std::move(wake);
        wake = nullptr;
    }
    ready.notify_all();
    if (next) next();
}

namespace {

// The resume handed to pace: fires once, when called or when its last copy goes uncalled.
struct resume_token {
    std::shared_ptr<pause_gate> gate;
    explicit resume_token(std::shared_ptr<pause_gate> g) : gate(std::move(g)) {}
    resume_token(const resume_token&) = delete;
    resume_token& operator=(const resume_token&) = delete;
    ~resume_token() { gate->fire(true); }
};

}  // namespace

void client_call::ask_pace() {
    auto gate = std::make_shared<pause_gate>();
    auto token = std::make_shared<resume_token>(gate);
    bool go_on = true;
    try {
        go_on = request_.pace([token] { token->gate->fire(false); });
    } catch (const std::exception& e) {
        fail(client_failure::aborted, std::string("the pace callback threw: ") + e.what());
        return;
    }
    token.reset();                        // only the application's copies hold it now
    if (!go_on) gate_ = std::move(gate);  // the next read waits for it
}

void client_call::finish_response(bool reusable) {
    if (reusable) {
        ++conn_->uses;
        shared_->give_back(std::move(conn_));
    } else {
        drop_connection();
    }
    if (discarding_ && follow_redirect()) return;
    phase_ = phase::done;
}

bool client_call::follow_redirect() {
    const auto location = result.response.header("location");
    auto next = resolve_location(url_, *location);
    if (!next) return false;
    const int status = result.response.status;
    if (!keeps_body(status, request_.method)) {
        request_.method = "GET";
        request_.body.clear();
        request_.body_file.clear();
        request_.body_fd = -1;
        request_.body_stream.reset();
        request_.body_stream_size.reset();
    }
    if (next->where.key() != url_.where.key()) {
        // Credentials go to the origin they were meant for, not wherever it points.
        std::erase_if(request_.headers, [](const auto& h) {
            return iequals(h.first, "authorization") || iequals(h.first, "cookie") ||
                   iequals(h.first, "proxy-authorization") || iequals(h.first, "host");
        });
    }
    request_.url =
        (next->where.https ? "https://" : "http://") + next->where.authority() + next->target;
    ++redirects_;
    retried_ = false;
    phase_ = phase::start;
    return true;
}

bool client_call::retry_on_fresh() {
    // Only a reused connection, once, for a request that can be sent again: the server
    // closed it while it sat idle (RFC 9112 9.3.1).
    if (!reused_ || retried_ || !idempotent(request_.method)) return false;
    // A piece taken from a body_stream reader cannot be had again.
    if (stream_taken_ > 0) return false;
    drop_connection();
    retried_ = true;
    phase_ = phase::start;
    return true;
}

bool client_call::wait(wait_for& next, upstream::status what, clock::time_point deadline) {
    const auto now = clock::now();
    if (now >= deadline) {
        timed_out();
        return true;
    }
    next.fd = conn_->fd();
    next.write = what == upstream::status::want_write;
    next.timeout =
        deadline == clock::time_point::max() ? std::chrono::nanoseconds::zero() : deadline - now;
    return false;
}

}  // namespace tern::detail

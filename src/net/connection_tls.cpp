// HTTPS on a connection: the TLS handshake before the first request, and the reads and
// writes of the other phases through the connection's tls_session (src/tls/session.hpp).
// OpenSSL does the system calls on the non-blocking socket; here the connection waits for
// the readiness a call asked for, with the same deadlines as plain HTTP (docs/tls.md).

#include "net/connection.hpp"

#include "net/worker.hpp"

#include <asio/post.hpp>

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <string>
#include <string_view>
#include <utility>

namespace tern::detail {

void connection::tls_wait(tls_session::status want, ready_fn fn) {
    if (want == tls_session::status::want_read) {
        can_read_ = ended_;
        when_ready(ready::read, fn);
    } else {
        can_write_ = false;
        when_ready(ready::write, fn);
    }
}

void connection::start_handshake(const std::shared_ptr<const tls_context>& context) {
    tls_ = std::make_unique<tls_session>(context, socket_.get());
    phase_ = phase::handshaking;
    // A slot of max_handshakes is taken when the hello's first bytes arrive: a client that
    // connects and sends nothing costs a connection (max_concurrent_connections, the
    // first-byte deadline), as over plain HTTP, but cannot shut others out of the slots.
    when_ready(ready::read, &connection::hello_arrived);
}

void connection::hello_arrived() {
    if (phase_ != phase::handshaking) return;
    handshake_heard_ = true;
    // From now on the whole handshake has the header deadline, counted from the accept (a
    // trickled hello ends there).
    set_deadline_at(accepted_at_ + owner_.settings().header_timeout, deadline_kind::handshake);
    if (!owner_.take_handshake_slot()) {
        close();  // over max_handshakes: counted as refused
        return;
    }
    handshake_counted_ = true;
    continue_handshake();
}

void connection::continue_handshake() {
    if (phase_ != phase::handshaking) return;
    const auto r = tls_->handshake();
    switch (r.what) {
        case tls_session::status::done:
            end_handshake(true, nullptr);
            client_subject_ = tls_->client_subject();
            // The first request has a new connection's deadlines, from here.
            phase_ = phase::reading;
            set_deadline(owner_.settings().first_byte_timeout, deadline_kind::idle);
            if (tls_->alpn() == "h2") {
                start_h2();
                return;
            }
            read();
            return;
        case tls_session::status::want_read:
        case tls_session::status::want_write:
            tls_wait(r.what, &connection::continue_handshake);
            return;
        case tls_session::status::closed:
            close();  // the client left mid-handshake
            return;
        case tls_session::status::failed:
            end_handshake(false, tls_->failure());
            if (tls_->plain_http()) {
                refuse_plain_http();
                return;
            }
            close();
            return;
    }
}

// What a request learns of its transport: HTTPS, and a client certificate's subject.
void connection::mark_transport(request& req) const {
    req.secure = tls_ != nullptr;
    if (!client_subject_.empty()) req.client_subject.assign(client_subject_);
}

// The plain listener beside HTTPS in redirect mode: the same host and target over HTTPS,
// 301 for GET and HEAD (what browsers and the users expect), 308 for other methods
// so that a POST is not silently turned into a GET. The Host's own port gives way to the
// HTTPS port, left out when it is 443. A request without a Host (HTTP/1.0) gets 400: there
// is no name to send it to.
void connection::redirect_to_https(const request& req) {
    std::string_view host = req.header("Host").value_or(std::string_view{});
    // Strip a port: after the last ':' unless that ':' is inside a bracketed IP literal.
    const auto colon = host.rfind(':');
    if (colon != std::string_view::npos && host.find(']', colon) == std::string_view::npos) {
        host = host.substr(0, colon);
    }
    response_.clear();
    if (host.empty()) {
        response_.status = 400;
        response_.content_type = "text/plain; charset=utf-8";
        response_.body = "This server speaks HTTPS; the request named no host to redirect to.\n";
        return;
    }
    std::string location = "https://";
    location.append(host);
    if (redirect_port_ != 443) location.append(":").append(std::to_string(redirect_port_));
    // The path and query (an absolute-form target's authority is not repeated).
    if (req.path.empty() || req.path.front() != '/') location.push_back('/');
    location.append(req.path);
    if (!req.query.empty()) location.append("?").append(req.query);
    response_.status = req.method == "GET" || req.method == "HEAD" ? 301 : 308;
    response_.content_type = "text/plain; charset=utf-8";
    response_.body = "Moved to " + location + "\n";
    response_.fields.emplace_back("Location", std::move(location));
}

void connection::end_handshake(bool completed, const char* failure) noexcept {
    if (!handshake_counted_) return;
    handshake_counted_ = false;
    owner_.handshake_ended(completed, failure, remote_ip_);
}

// A plain HTTP request on the HTTPS port: answered in plain text, as nginx does, so that
// someone who typed http:// sees why instead of a reset. Then the connection closes.
void connection::refuse_plain_http() {
    tls_.reset();
    phase_ = phase::writing;
    static constexpr std::string_view answer =
        "HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain; charset=utf-8\r\n"
        "Content-Length: 55\r\nConnection: close\r\n\r\n"
        "This port speaks HTTPS: the request came as plain HTTP\n";
    static_assert(answer.size() - answer.find("\r\n\r\n") - 4 == 55);
    out_.append(answer);
    close_after_write_ = true;
    write();
}

// Reads what OpenSSL can decrypt now into the worker's read buffer, or waits for the
// readiness it asks for. The result goes to on_read as a plain read's would (always in a
// handler of its own: read() posts the first try).
void connection::tls_read() {
    const auto buffer = owner_.read_buffer();
    const auto r = tls_->read(buffer.data(), buffer.size());
    std::error_code ec;
    switch (r.what) {
        case tls_session::status::done:
            break;
        case tls_session::status::want_read:
        case tls_session::status::want_write:
            tls_wait(r.what, &connection::tls_read);
            return;
        case tls_session::status::closed:
            ec = asio::error::eof;
            break;
        case tls_session::status::failed:
            ec = asio::error::connection_aborted;
            break;
    }
    on_read(ec, r.n);
    keep_unparsed();
}

// The TLS form of write_some: everything OpenSSL takes now, then a wait for the readiness
// it asks for, under the write deadline (progress-based, as for plain writes).
void connection::tls_write_some() {
    while (written_ < out_.size()) {
        const auto r = tls_->write(out_.data() + written_, out_.size() - written_);
        switch (r.what) {
            case tls_session::status::done:
                written_ += r.n;
                continue;
            case tls_session::status::want_read:
            case tls_session::status::want_write:
                set_deadline(write_timeout_, deadline_kind::write);
                tls_wait(r.what, &connection::tls_write_some);
                return;
            case tls_session::status::closed:
            case tls_session::status::failed:
                on_write(asio::error::connection_reset);
                return;
        }
    }
    on_write({});
}

// A piece of a file body through OpenSSL: read, then encrypted and sent. A retry after a
// wait reads the same bytes again from the same offset, as OpenSSL requires. Returns what
// send(2) would, with errno EAGAIN while waiting (tls_write_wants_ says for what).
ssize_t connection::tls_send_file_chunk(std::size_t n) {
    const ssize_t got = read_file_piece(n);
    if (got < 0) return -1;
    const auto r = tls_->write(owner_.file_buffer().data(), static_cast<std::size_t>(got));
    switch (r.what) {
        case tls_session::status::done:
            return static_cast<ssize_t>(r.n);
        case tls_session::status::want_read:
        case tls_session::status::want_write:
            tls_write_wants_ = r.what;
            errno = EAGAIN;
            return -1;
        case tls_session::status::closed:
        case tls_session::status::failed:
            break;
    }
    errno = EPIPE;
    return -1;
}

}  // namespace tern::detail

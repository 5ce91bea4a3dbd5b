// HTTPS on a transport: the TLS handshake before the protocol's first byte, and the reads
// and writes after it through the connection's tls_channel (src/tls/channel.hpp). OpenSSL
// does the system calls on the non-blocking socket; here the transport waits for the
// readiness a call asked for, with the same deadlines as plain HTTP (docs/tls.md).

#include "net/transport.hpp"

#include "net/worker.hpp"

#include <cerrno>
#include <string_view>

namespace tern::detail {

void transport::tls_wait(tls_channel::status want, ready_fn fn) {
    if (want == tls_channel::status::want_read) {
        can_read_ = ended_;
        when_ready(ready::read, fn);
    } else {
        can_write_ = false;
        when_ready(ready::write, fn);
    }
}

void transport::start_handshake() {
    tls_ = std::make_unique<tls_channel>(tls_context_, socket_.get());
    secure_ = true;
    tls_context_.reset();
    opening_ = true;
    // A slot of max_handshakes is taken when the hello's first bytes arrive: a client that
    // connects and sends nothing costs a connection (max_concurrent_connections, the
    // first-byte deadline), as over plain HTTP, but cannot shut others out of the slots.
    when_ready(ready::read, &transport::hello_arrived);
}

void transport::hello_arrived() {
    if (!opening_) return;
    // From now on the whole handshake has the header deadline, counted from the accept (a
    // trickled hello ends there).
    set_deadline_at(accepted_at_ + owner_.settings().timeouts.header, deadline_kind::handshake);
    if (!owner_.take_handshake_slot()) {
        open_failed(false);  // over max_handshakes: counted as refused
        return;
    }
    handshake_counted_ = true;
    continue_handshake();
}

void transport::continue_handshake() {
    if (!opening_ || closed_) return;
    const auto r = tls_->handshake();
    switch (r.what) {
        case tls_channel::status::done:
            end_handshake(true, nullptr);
            client_subject_ = tls_->client_subject();
            opened(tls_->alpn());
            return;
        case tls_channel::status::want_read:
        case tls_channel::status::want_write:
            tls_wait(r.what, &transport::continue_handshake);
            return;
        case tls_channel::status::closed:
            open_failed(false);  // the client left mid-handshake
            return;
        case tls_channel::status::failed:
            end_handshake(false, tls_->failure());
            if (tls_->plain_http()) {
                // Answered in plain text by the protocol, as nginx does: no TLS from here.
                tls_.reset();
                secure_ = false;
                open_failed(true);
                return;
            }
            open_failed(false);
            return;
    }
}

void transport::end_handshake(bool completed, const char* failure) noexcept {
    if (!handshake_counted_) return;
    handshake_counted_ = false;
    owner_.handshake_ended(completed, failure, remote_ip_);
}

// Reads what OpenSSL can decrypt now into the worker's read buffer, or waits for the
// readiness it asks for. The result goes to on_read as a plain read's would (always in a
// handler of its own: read() posts the first try).
void transport::tls_read() {
    reading_ = false;
    const auto buffer = read_buffer_;
    const auto r = tls_->read(buffer.data(), buffer.size());
    std::error_code ec;
    switch (r.what) {
        case tls_channel::status::done:
            break;
        case tls_channel::status::want_read:
        case tls_channel::status::want_write:
            reading_ = true;
            tls_wait(r.what, &transport::tls_read);
            return;
        case tls_channel::status::closed:
            ec = asio::error::eof;
            break;
        case tls_channel::status::failed:
            ec = asio::error::connection_aborted;
            break;
    }
    owner_.count_received(r.n);
    deliver_read(ec, r.n);
}

// The TLS form of write_some: everything OpenSSL takes now, then a wait for the readiness
// it asks for, under the write deadline (progress-based, as for plain writes).
void transport::tls_write_some() {
    while (written_ < out_.size()) {
        const auto r = tls_->write(out_.data() + written_, out_.size() - written_);
        switch (r.what) {
            case tls_channel::status::done:
                written_ += r.n;
                continue;
            case tls_channel::status::want_read:
            case tls_channel::status::want_write:
                set_deadline(write_timeout_, deadline_kind::write);
                tls_wait(r.what, &transport::tls_write_some);
                return;
            case tls_channel::status::closed:
            case tls_channel::status::failed:
                written(asio::error::connection_reset);
                return;
        }
    }
    written({});
}

// A piece of a file body through OpenSSL: read, then encrypted and sent, record by record
// (OpenSSL's partial writes return after each 16 KiB record), until the piece is out or the
// socket is full. A retry after a wait reads the bytes not yet taken again from their
// offset, as OpenSSL requires. Returns what send(2) would, with errno EAGAIN while waiting
// (tls_write_wants_ says for what).
ssize_t transport::tls_send_file_chunk(std::size_t n) {
    const ssize_t got = read_file_piece(n);
    if (got < 0) return -1;
    const char* piece = owner_.file_buffer().data();
    const auto size = static_cast<std::size_t>(got);
    std::size_t sent = 0;
    while (sent < size) {
        const auto r = tls_->write(piece + sent, size - sent);
        switch (r.what) {
            case tls_channel::status::done:
                sent += r.n;
                continue;
            case tls_channel::status::want_read:
            case tls_channel::status::want_write:
                if (sent != 0) return static_cast<ssize_t>(sent);  // asked again, it waits then
                tls_write_wants_ = r.what;
                errno = EAGAIN;
                return -1;
            case tls_channel::status::closed:
            case tls_channel::status::failed:
                errno = EPIPE;
                return -1;
        }
    }
    return static_cast<ssize_t>(sent);
}

}  // namespace tern::detail

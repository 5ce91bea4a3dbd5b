// The write side of a connection: gathered writes of the output buffer, file bodies with
// sendfile(2), what follows a write (the next read, a resumed request, the close), and the
// linger after an error response. The read side is in connection.cpp.

#include "net/connection.hpp"

#include "net/worker.hpp"

#include <asio/post.hpp>

#include <sys/socket.h>
#include <unistd.h>
#if defined(__linux__)
#include <sys/sendfile.h>
#endif

#include <algorithm>
#include <cerrno>
#include <utility>

namespace tern::detail {

namespace {

// How long a closing connection keeps reading (and discarding) after its last response, so
// the client reads that response instead of a reset (RFC 9112 9.6).
constexpr auto linger_time = std::chrono::seconds(2);

}  // namespace

void connection::write() {
    phase_ = phase::writing;
    owner_.count_write();
    written_ = 0;
    if (out_.empty()) {
        send_file();
        return;
    }
    write_some();
}

void connection::write_some() {
    if (tls_) {
        tls_write_some();
        return;
    }
    // A plain non-blocking send: the socket buffer almost always takes a batch of responses
    // whole, and then nothing waits at all.
    ssize_t n = 0;
    while (written_ < out_.size()) {
        n = ::send(socket_.get(), out_.data() + written_, out_.size() - written_, MSG_NOSIGNAL);
        if (n >= 0) {
            written_ += static_cast<std::size_t>(n);
        } else if (errno != EINTR) {
            break;
        }
    }
    if (written_ == out_.size()) {
        on_write({});
        return;
    }
    if (errno != EAGAIN && errno != EWOULDBLOCK) {
        on_write(std::error_code(errno, std::system_category()));  // the connection failed
        return;
    }
    // The client is not reading fast enough: wait for room. The write deadline is on
    // progress, not on the whole response: each completed piece moves it on, so a slow
    // reader of a large response is served and a stalled one is not.
    can_write_ = false;
    set_deadline(write_timeout_, deadline_kind::write);
    when_ready(ready::write, &connection::write_some);
}

void connection::on_write(std::error_code ec) {
    owner_.count_sent(written_);  // what went out of out_, all of it unless the write failed
    if (phase_ == phase::closed) return;
    if (ec) {
        close();
        return;
    }
    clear_buffer(out_);
    if (pending_file_.file) {
        send_file();
        return;
    }
    if (stream_) {
        // The next piece of a streamed body. Posted, not called: writes complete
        // synchronously, and a producer that keeps up must not nest pull -> write -> pull.
        asio::post(timer_.get_executor(), [self = shared_from_this()] {
            if (self->phase_ == phase::writing && self->stream_) self->pull_stream();
        });
        return;
    }
    after_write();
}

void connection::send_file() {
    // sendfile(2) moves the file to the socket in the kernel: memory stays flat however large
    // the file. A turn sends at most file_turn_bytes before yielding, so one fast reader of a
    // large file cannot starve the other connections of this thread.
    constexpr std::uint64_t file_turn_bytes = 1 << 20;
    auto& f = pending_file_;
    std::uint64_t this_turn = 0;
    while (f.length > 0) {
        if (this_turn >= file_turn_bytes) {
            asio::post(timer_.get_executor(), [self = shared_from_this()] { self->file_ready(); });
            return;
        }
        const auto chunk = static_cast<std::size_t>(std::min<std::uint64_t>(f.length, 1 << 20));
        const ssize_t n = send_file_chunk(chunk);
        if (n > 0) {
            const auto sent = static_cast<std::uint64_t>(n);
            owner_.count_sent(static_cast<std::size_t>(n));
            f.offset += sent;
            f.length -= sent;
            this_turn += sent;
            set_deadline(write_timeout_, deadline_kind::write);
            continue;
        }
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            set_deadline(write_timeout_, deadline_kind::write);
            if (tls_) {
                tls_wait(tls_write_wants_, &connection::file_ready);
            } else {
                can_write_ = false;
                when_ready(ready::write, &connection::file_ready);
            }
            return;
        }
        // The file shrank under us or the socket failed: the promised Content-Length can no
        // longer be kept, so the connection ends here.
        close();
        return;
    }
    pending_file_ = file_body{};
    after_write();
}

void connection::file_ready() {
    if (phase_ == phase::writing) send_file();
}

ssize_t connection::send_file_chunk(std::size_t n) {
    if (tls_) return tls_send_file_chunk(n);  // the bytes go through OpenSSL: no sendfile
#if defined(__linux__)
    if (owner_.settings().sendfile && !sendfile_unsupported_) {
        const auto& f = pending_file_;
        auto offset = static_cast<off_t>(f.offset);
        const ssize_t sent = ::sendfile(socket_.get(), f.file.get(), &offset, n);
        if (sent >= 0 || (errno != EINVAL && errno != ENOSYS)) return sent;
        sendfile_unsupported_ = true;  // e.g. a file system without sendfile support
    }
#endif
    // A piece through the loop's buffer: what the socket does not take now is read again
    // from its offset next time.
    const ssize_t got = read_file_piece(n);
    if (got < 0) return -1;
    return ::send(socket_.get(), owner_.file_buffer().data(), static_cast<std::size_t>(got),
                  MSG_NOSIGNAL);
}

ssize_t connection::read_file_piece(std::size_t n) {
    const auto& f = pending_file_;
    const auto buffer = owner_.file_buffer();
    const ssize_t got = ::pread(f.file.get(), buffer.data(), std::min(n, buffer.size()),
                                static_cast<off_t>(f.offset));
    if (got <= 0) {
        if (got == 0) errno = EIO;  // the file shrank under us
        return -1;
    }
    return got;
}

void connection::after_write() {
    if (close_after_write_) {
        linger();
        return;
    }
    if (deferred_) {
        // The responses before a deferred request are out; it is still being answered.
        wait_for_resume();
        if (parked_resume_) resume(std::exchange(parked_resume_, nullptr));
        return;
    }
    if (owner_.stopping()) {
        close();  // answered everything that had arrived; the server is going away
        return;
    }
    if (!input_.empty()) {
        // Pipelined requests that waited behind a file body. Posted, not called: writes
        // complete synchronously, and a pipeline of many file requests must not nest
        // consume_input -> write -> after_write calls one inside the other.
        asio::post(timer_.get_executor(), [self = shared_from_this()] {
            if (self->phase_ == phase::writing) self->consume_input();
        });
        return;
    }
    // A request may be in progress: one whose headers were followed by 100 Continue, or a
    // pipelined one that began in the last read. Its own deadline runs, not keep-alive.
    set_deadline(owner_.settings().keep_alive_timeout, deadline_kind::idle);
    set_read_deadline();
    phase_ = phase::reading;
    read();
}

void connection::linger() {
    if (tls_) tls_->shutdown();  // close_notify before the TCP FIN
    ::shutdown(socket_.get(), SHUT_WR);
    set_deadline(linger_time, deadline_kind::linger);
    phase_ = phase::lingering;
    read();
}

}  // namespace tern::detail

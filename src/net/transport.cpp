#include "net/transport.hpp"

#include "http/buffers.hpp"
#include "net/worker.hpp"
#include "platform/files.hpp"
#include "platform/socket_api.hpp"
#include "platform/sockets.hpp"

#include <asio/post.hpp>

#include <algorithm>
#include <cerrno>
#include <utility>

namespace tern::detail {

transport::transport(asio::ip::tcp::socket socket, worker& owner)
    : owner_(owner), write_timeout_(owner.settings().timeouts.write) {
    read_buffer_ = owner.read_buffer();
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
    socket_ = platform::socket_handle(take_socket(socket, owner_.poller(), ec));
    if (socket_ && platform::set_non_blocking(socket_.get())) {
        polled_ = owner_.poller().watch(socket_.get(), *this);
    }
}

transport::~transport() {
    if (scheduled()) owner_.unschedule(*this);  // close() has taken it out, unless never closed
}

void transport::start(std::shared_ptr<const tls_context> tls, std::uint16_t redirect_port) {
    redirect_port_ = redirect_port;
    if (!polled_) {
        close();  // out of descriptors or memory for the poller: nothing can be served
        return;
    }
    // A client that connects and sends nothing is closed without an answer.
    accepted_at_ = clock::now();
    set_deadline(owner_.settings().timeouts.first_byte, deadline_kind::idle);
    tls_context_ = std::move(tls);
    opening_ = true;
    if (owner_.settings().proxy_protocol) {
        read_proxy_header();
        return;
    }
    if (tls_context_) {
        start_handshake();
        return;
    }
    opened({});
}

void transport::refuse() {
    if (!polled_) {
        close();
        return;
    }
    open_protocol(opening::mode::refuse_busy, {});
}

void transport::opened(std::string_view alpn) {
    opening_ = false;
    // The first request has a new connection's deadlines, from here.
    set_deadline(owner_.settings().timeouts.first_byte, deadline_kind::idle);
    open_protocol(opening::mode::serve, alpn);
}

void transport::open_failed(bool plain_http) {
    opening_ = false;
    if (plain_http) {
        open_protocol(opening::mode::refuse_plain_http, {});
        return;
    }
    close();
}

void transport::open_protocol(opening::mode what, std::string_view alpn) {
    user_ = owner_.open_protocol(shared_from_this(), opening{what, alpn, redirect_port_});
    if (!user_) {  // the protocol could not start (it said why): the connection ends
        close();
        return;
    }
    user_->start();
}

void transport::hand_over(std::shared_ptr<transport_user> next) {
    // The protocol that hands over is let go on a later turn: this call comes from inside it.
    asio::post(owner_.executor(), [old = std::exchange(user_, std::move(next))] {});
    user_->start();
}

void transport::stop_when_idle() {
    if (user_) {
        user_->stop_when_idle();
    } else {
        close();  // still reading the PROXY header or in the TLS handshake
    }
}

void transport::begin_closing() {
    if (user_) user_->begin_closing();
}

void transport::close() noexcept {
    if (closed_) return;
    closed_ = true;
    // The protocol lets go of what waits for the peer (deferred work, held responses,
    // streams) before the socket closes.
    if (user_) user_->on_close();
    if (handshake_counted_) end_handshake(false, nullptr);  // the client left, or timed out
    if (tls_) tls_->shutdown();  // close_notify, if the channel can still send one
    owner_.unschedule(*this);
    if (polled_) {
        owner_.poller().forget(socket_.get(), *this);
        polled_ = false;
    }
    stop_reading();
    cancel_ready(ready::write);
    socket_.reset();
    owner_.forget(this);
    // The protocol holds this transport and is held by it: the cycle ends here, on a later
    // turn of the loop (the caller may be the protocol itself).
    if (user_) asio::post(owner_.executor(), [keep = std::move(user_)] {});
}

void transport::post(std::function<void()> fn) { asio::post(owner_.executor(), std::move(fn)); }

// ---- readiness ---------------------------------------------------------------------------

void transport::waiters::add(ready_fn fn) noexcept {
    if (first == nullptr || first == fn) {
        first = fn;
    } else {
        second = fn;
    }
}

void transport::waiters::run(transport& t) {
    const auto one = std::exchange(first, nullptr);
    const auto two = std::exchange(second, nullptr);
    if (one != nullptr) (t.*one)();
    if (two != nullptr && !t.closed_) (t.*two)();
}

void transport::when_ready(ready what, ready_fn fn) {
    (what == ready::read ? on_readable_ : on_writable_).add(fn);
    if (!ready_hold_) ready_hold_ = shared_from_this();
    if (what == ready::read ? can_read_ : can_write_) {
        asio::post(owner_.executor(), [keep = ready_hold_] { keep->run_ready(); });
    } else {
        // Found empty (full): the portable poller waits only when asked; Linux's epoll set
        // tells every change anyway, and its want() is empty.
        owner_.poller().want(socket_.get(), *this, what == ready::write);
    }
}

void transport::cancel_ready(ready what) noexcept {
    (what == ready::read ? on_readable_ : on_writable_) = waiters{};
    // Let go on a later turn of the loop: the caller may know this connection by a plain
    // pointer only (the worker's list at a stop).
    if (on_readable_.empty() && on_writable_.empty() && ready_hold_) {
        asio::post(owner_.executor(), [keep = std::move(ready_hold_)] {});
    }
}

void transport::on_ready(bool readable, bool writable, bool ended) {
    can_read_ = can_read_ || readable;
    can_write_ = can_write_ || writable;
    ended_ = ended_ || ended;
    run_ready();
}

void transport::run_ready() {
    auto keep = ready_hold_;  // alive through the calls, whatever they do
    if (can_read_ && !on_readable_.empty()) on_readable_.run(*this);
    if (can_write_ && !on_writable_.empty() && !closed_) on_writable_.run(*this);
    if (on_readable_.empty() && on_writable_.empty()) ready_hold_.reset();
}

int transport::peek() noexcept {
    char byte = 0;
    ssize_t n = 0;
    do {
        n = platform::receive_bytes(socket_.get(), &byte, 1, MSG_PEEK | platform::dont_wait);
    } while (n < 0 && errno == EINTR);
    if (n > 0) return 1;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
        can_read_ = ended_;  // found empty: the next arrival is told
        return -1;
    }
    return 0;
}

void transport::wait_readable() { when_ready(ready::read, &transport::user_readable); }

void transport::user_readable() {
    if (user_) user_->on_readable();
}

// ---- reading -----------------------------------------------------------------------------

void transport::read() {
    if (reading_) return;
    reading_ = true;
    if (tls_) {
        // OpenSSL may hold decrypted bytes already, whatever the socket has: they are read
        // in a handler of their own, so that a read never completes inside its own call.
        asio::post(owner_.executor(), [self = shared_from_this()] {
            if (self->reading_ && !self->closed_) self->tls_read();
        });
        return;
    }
    when_ready(ready::read, &transport::read_now);
}

void transport::read_now() {
    reading_ = false;
    const auto buffer = read_buffer_;
    ssize_t n = 0;
    do {
        n = platform::receive_bytes(socket_.get(), buffer.data(), buffer.size(), 0);
    } while (n < 0 && errno == EINTR);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
        can_read_ = ended_;
        reading_ = true;
        when_ready(ready::read, &transport::read_now);
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
    owner_.count_received(n > 0 ? static_cast<std::size_t>(n) : 0);
    deliver_read(ec, n > 0 ? static_cast<std::size_t>(n) : 0);
}

void transport::deliver_read(std::error_code ec, std::size_t n) {
    if (!lingering_) {
        if (user_) user_->on_read(ec, n);
        return;
    }
    if (ec) {
        close();  // the peer's end (or an error): the linger is over
    } else {
        read();
    }
}

void transport::linger() {
    shutdown_sending();
    lingering_ = true;
    set_deadline(std::chrono::seconds(2), deadline_kind::linger);
    read();
}

void transport::stop_reading() noexcept {
    reading_ = false;
    cancel_ready(ready::read);
}

// ---- writing -----------------------------------------------------------------------------

void transport::shorten_write_timeout(std::chrono::milliseconds t) noexcept {
    write_timeout_ = std::min(write_timeout_, t);
}

void transport::write() {
    writing_ = true;
    owner_.count_write();
    written_ = 0;
    if (out_.empty()) {
        send_file();
        return;
    }
    write_some();
}

void transport::write_some() {
    if (tls_) {
        tls_write_some();
        return;
    }
    // A plain non-blocking send: the socket buffer almost always takes a batch of responses
    // whole, and then nothing waits at all.
    ssize_t n = 0;
    while (written_ < out_.size()) {
        n = platform::send_bytes(socket_.get(), out_.data() + written_, out_.size() - written_,
                                 platform::send_flags);
        if (n >= 0) {
            written_ += static_cast<std::size_t>(n);
        } else if (errno != EINTR) {
            break;
        }
    }
    if (written_ == out_.size()) {
        written({});
        return;
    }
    if (errno != EAGAIN && errno != EWOULDBLOCK) {
        written(std::error_code(errno, std::system_category()));  // the connection failed
        return;
    }
    // The client is not reading fast enough: wait for room. The write deadline is on
    // progress, not on the whole response: each completed piece moves it on, so a slow
    // reader of a large response is served and a stalled one is not.
    can_write_ = false;
    set_deadline(write_timeout_, deadline_kind::write);
    when_ready(ready::write, &transport::write_some);
}

void transport::written(std::error_code ec) {
    owner_.count_sent(written_);  // what went out of out_, all of it unless the write failed
    if (closed_ || !user_) return;
    if (ec) {
        writing_ = false;
        user_->on_written(ec);
        return;
    }
    clear_buffer(out_);
    if (file_.file) {
        send_file();
        return;
    }
    writing_ = false;
    user_->on_written({});
}

void transport::send_file() {
    // sendfile(2) moves the file to the socket in the kernel: memory stays flat however large
    // the file. A turn sends at most file_turn_bytes before yielding, so one fast reader of a
    // large file cannot starve the other connections of this thread.
    constexpr std::uint64_t file_turn_bytes = 1 << 20;
    auto& f = file_;
    std::uint64_t this_turn = 0;
    while (f.length > 0) {
        if (this_turn >= file_turn_bytes) {
            asio::post(owner_.executor(), [self = shared_from_this()] { self->file_ready(); });
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
                tls_wait(tls_write_wants_, &transport::file_ready);
            } else {
                can_write_ = false;
                when_ready(ready::write, &transport::file_ready);
            }
            return;
        }
        // The file shrank under us or the socket failed: the promised Content-Length can no
        // longer be kept, so the connection ends here.
        file_ = file_body{};
        writing_ = false;
        user_->on_written(std::make_error_code(std::errc::io_error));
        return;
    }
    file_ = file_body{};
    writing_ = false;
    user_->on_written({});
}

void transport::file_ready() {
    if (writing_ && !closed_) send_file();
}

ssize_t transport::send_file_chunk(std::size_t n) {
    if (tls_) return tls_send_file_chunk(n);  // the bytes go through OpenSSL: no sendfile
    if (owner_.settings().sendfile && !sendfile_unsupported_) {
        // sendfile(2) on Linux (platform/files.hpp); ENOSYS on the portable path.
        const ssize_t sent =
            platform::send_file_piece(socket_.get(), file_.file.get(), file_.offset, n);
        if (sent >= 0 || (errno != EINVAL && errno != ENOSYS)) return sent;
        sendfile_unsupported_ = true;  // e.g. a file system without sendfile support
    }
    // A piece through the loop's buffer: what the socket does not take now is read again
    // from its offset next time.
    const ssize_t got = read_file_piece(n);
    if (got < 0) return -1;
    return platform::send_bytes(socket_.get(), owner_.file_buffer().data(),
                                static_cast<std::size_t>(got), platform::send_flags);
}

ssize_t transport::read_file_piece(std::size_t n) {
    const auto buffer = owner_.file_buffer();
    const ssize_t got = platform::read_file_at(file_.file.get(), buffer.data(),
                                               std::min(n, buffer.size()), file_.offset);
    if (got <= 0) {
        if (got == 0) errno = EIO;  // the file shrank under us
        return -1;
    }
    return got;
}

void transport::shutdown_sending() noexcept {
    if (tls_) tls_->shutdown();  // close_notify before the TCP FIN
    ::shutdown(socket_.get(), platform::shut_write);
}

// ---- deadlines ---------------------------------------------------------------------------

void transport::set_deadline(clock::duration after, deadline_kind kind) {
    set_deadline_at(clock::now() + after, kind);
}

void transport::set_deadline_at(clock::time_point when, deadline_kind kind) {
    deadline_ = when;
    deadline_kind_ = kind;
    if (closed_) return;
    if (scheduled() && scheduled_at() <= when) return;  // deadline_due moves it on
    owner_.schedule(*this, when);
}

void transport::deadline_due() {
    if (closed_ || deadline_kind_ == deadline_kind::none) return;
    if (clock::now() < deadline_) {
        owner_.schedule(*this, deadline_);
        return;
    }
    if (user_ && !lingering_) {
        user_->on_deadline(deadline_kind_);
    } else {
        close();  // the first byte's deadline, or the handshake's
    }
}

}  // namespace tern::detail

#pragma once
// One client connection's bytes: the socket (TCP or Unix), its readiness on the worker's
// poller, the PROXY header and the TLS handshake before any protocol byte, plain or TLS reads
// and writes, file bodies (sendfile(2), or pieces through OpenSSL), the one deadline timer,
// and the close. It knows no protocol: what it reads and when its writes and deadlines end
// go to its `transport_user` (the HTTP/1 connection, which carries HTTP/2 and WebSocket
// after it chose them), which decides everything else (docs/architecture.md, "The byte
// transport and the protocols over it").

#include "http/file_handle.hpp"
#include "http/response.hpp"
#include "net/socket_poller.hpp"
#include "tls/session.hpp"

#include <asio/ip/tcp.hpp>
#include <asio/post.hpp>
#include <asio/steady_timer.hpp>

#include <sys/types.h>
#include <chrono>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <system_error>

namespace tern::detail {

class worker;

/// Which deadline the transport's one timer stands for: the transport's own (the first byte,
/// the handshake or PROXY header, a write's progress, the linger) or the protocol's.
enum class deadline_kind { none, idle, header, body, write, linger, stream_idle, handshake };

/// What the protocol over a transport hears from it, on the loop thread. Each call comes from
/// a handler of the transport's (readiness, the timer, a posted read), except two that may
/// come inside the user's own call: `on_open` inside `start` (a plain connection has nothing
/// to wait for) and `on_written` inside `write` (the socket took everything at once).
class transport_user {
public:
    /// Keeps the user (and the transport it owns) alive while a wait or the timer is pending.
    virtual std::shared_ptr<void> keep_alive() = 0;
    /// The connection is ready for the protocol: after the PROXY header and the TLS handshake
    /// (`alpn`: the protocol TLS agreed on, empty for none and for plain connections).
    virtual void on_open(std::string_view alpn) = 0;
    /// The PROXY header was refused, the handshake failed, timed out or was over the
    /// handshake cap (`plain_http`: the client spoke plain HTTP to the TLS port).
    virtual void on_open_failed(bool plain_http) = 0;
    /// A read ended: `n` bytes in the worker's read buffer, or the peer's end or an error.
    virtual void on_read(std::error_code ec, std::size_t n) = 0;
    /// The output buffer and the file after it are written (or the write failed).
    virtual void on_written(std::error_code ec) = 0;
    /// The socket became readable while the user waited for that alone (`wait_readable`).
    virtual void on_readable() = 0;
    /// The deadline set last has passed.
    virtual void on_deadline(deadline_kind kind) = 0;

protected:
    ~transport_user() = default;
};

/// One connection's socket and what is written to it. Owned by its user, which it never
/// outlives; loop thread only.
class transport final : private poll_target {
public:
    using clock = std::chrono::steady_clock;

    /// Takes the socket out of asio's hands into the worker's poller.
    transport(asio::ip::tcp::socket socket, worker& owner, transport_user& user);
    ~transport();
    transport(const transport&) = delete;
    transport& operator=(const transport&) = delete;

    /// False when the socket could not be watched (out of descriptors or memory): nothing
    /// can be served.
    bool usable() const noexcept { return polled_; }
    /// Starts: the PROXY header first (config::proxy_protocol), then the TLS handshake with
    /// `tls` (null: plain), then `on_open`.
    void start(std::shared_ptr<const tls_context> tls);
    /// Closes the socket now (close_notify first under TLS); pending waits end. Once.
    void close() noexcept;
    bool closed() const noexcept { return closed_; }

    /// The client: its address (the PROXY header's source when there was one, "unix" on a
    /// Unix socket), TLS, a verified client certificate's subject.
    const std::string& remote_ip() const noexcept { return remote_ip_; }
    bool secure() const noexcept { return tls_ != nullptr; }
    const std::string& client_subject() const noexcept { return client_subject_; }
    /// While the handshake or the PROXY header is read (a stop closes such a connection).
    bool opening() const noexcept { return opening_; }

    // ---- reading
    /// The next bytes go to `on_read` (once). Nothing is tried now: a plain read waits for the
    /// poller to tell of an arrival (after a response the next request has almost never come).
    void read();
    /// Cancels a read (and a readability wait).
    void stop_reading() noexcept;
    /// The worker's read buffer, where `on_read`'s bytes are.
    std::span<char> read_buffer() const noexcept;
    /// Looks at the socket without taking a byte: 1 when bytes wait, 0 at the peer's end or an
    /// error, -1 when there is nothing yet.
    int peek() noexcept;
    /// `on_readable` once the socket becomes readable (it was found empty: `peek` said -1).
    void wait_readable();
    /// Drops a `wait_readable` (and a read).
    void cancel_readable() noexcept;

    // ---- writing
    /// What the next write sends, then `file()`. The user appends to it between writes.
    std::string& out() noexcept { return out_; }
    /// A file body sent after `out()`.
    file_body& file() noexcept { return file_; }
    /// Writes `out()` then `file()`, then `on_written`. A write waits under the write deadline,
    /// which moves on with each piece the client takes.
    void write();
    /// A write is under way (not yet reported to `on_written`).
    bool writing() const noexcept { return writing_; }
    /// The write deadline becomes at most `t` (a refused connection's 503).
    void shorten_write_timeout(std::chrono::milliseconds t) noexcept;
    /// Sends nothing more: close_notify under TLS, then the TCP FIN; reads go on.
    void shutdown_sending() noexcept;

    // ---- the one deadline
    void set_deadline(clock::duration after, deadline_kind kind);
    void set_deadline_at(clock::time_point when, deadline_kind kind);
    /// No deadline (the timer moves on lazily when it fires).
    void clear_deadline() noexcept {
        deadline_ = clock::time_point::max();
        deadline_kind_ = deadline_kind::none;
    }
    /// Runs `fn` on the loop, in a handler of its own.
    template <class Fn>
    void post(Fn&& fn) {
        asio::post(timer_.get_executor(), std::forward<Fn>(fn));
    }

private:
    // Readiness (net/socket_poller.hpp): `fn` runs, in a handler of its own and never inside
    // the call that asked, once the socket is readable (bytes, the peer's end or an error) or
    // writable (room, or an error). Two waiters per direction at most (a TLS write may wait
    // for bytes while a read does); close() and cancel_ready() drop them. Whoever finds the
    // socket empty (or full) says so (can_read_, can_write_) before waiting: the poller tells
    // only of changes.
    enum class ready { read, write };
    using ready_fn = void (transport::*)();
    struct waiters {
        ready_fn first = nullptr;
        ready_fn second = nullptr;
        bool empty() const noexcept { return first == nullptr && second == nullptr; }
        void add(ready_fn fn) noexcept;
        // Runs them once (`fn`s added meanwhile wait for the next change); the second only
        // if the first left the transport open.
        void run(transport& t);
    };
    void when_ready(ready what, ready_fn fn);
    void cancel_ready(ready what) noexcept;
    void on_ready(bool readable, bool writable, bool ended) override;
    void run_ready();
    void user_readable();

    void opened(std::string_view alpn);
    void read_now();
    void write_some();
    void written(std::error_code ec);
    void send_file();
    void file_ready();
    ssize_t send_file_chunk(std::size_t n);
    // Reads the next piece of the file (at most n bytes, 64 KiB) into the worker's file
    // buffer: its size, or -1 with errno (EIO when the file ended early).
    ssize_t read_file_piece(std::size_t n);
    void on_timer(std::error_code ec);

    // The PROXY protocol header (transport_proxy.cpp).
    void read_proxy_header();
    void on_proxy_bytes();
    // TLS (transport_tls.cpp): the handshake, then reads and writes through the session.
    void start_handshake();
    void hello_arrived();
    void continue_handshake();
    void end_handshake(bool completed, const char* failure) noexcept;
    void tls_read();
    void tls_write_some();
    ssize_t tls_send_file_chunk(std::size_t n);
    // Waits for the readiness a TLS call that could not go on asked for, then runs `fn`.
    void tls_wait(tls_session::status want, ready_fn fn);

    file_handle socket_;  // non-blocking, watched by the worker's poller
    asio::steady_timer timer_;
    worker& owner_;
    transport_user& user_;
    std::string remote_ip_;
    std::string out_;          // bytes waiting for the next write
    std::size_t written_ = 0;  // bytes of out_ already written
    file_body file_;           // a file body to send after out_
    std::chrono::milliseconds write_timeout_;
    bool sendfile_unsupported_ = false;
    bool closed_ = false;
    bool opening_ = false;
    bool reading_ = false;  // a read is outstanding
    bool writing_ = false;
    // HTTPS: the TLS session (null on plain HTTP), and the context to start it with once the
    // PROXY header is read. The handshake holds one of the worker's handshake slots until it
    // ends; the last TLS write that could not go on said which readiness it waits for.
    std::shared_ptr<const tls_context> tls_context_;
    std::unique_ptr<tls_session> tls_;
    bool handshake_counted_ = false;
    tls_session::status tls_write_wants_ = tls_session::status::want_write;
    std::string client_subject_;  // of a verified client certificate (mutual TLS)
    clock::time_point accepted_at_{};
    std::string proxy_bytes_;  // config::proxy_protocol: the header's bytes so far

    // Readiness: the socket is in the poller's set; what it is known to have (bytes, room,
    // the peer's end) since it was last found empty or full; the waiters; and the user's
    // owner while one waits (the poller knows the transport by a plain pointer).
    bool polled_ = false;
    bool can_read_ = false;
    bool can_write_ = true;
    bool ended_ = false;
    waiters on_readable_;
    waiters on_writable_;
    std::shared_ptr<void> ready_hold_;

    // One timer serves every phase: the logical deadline lives here, and the timer is only
    // re-armed when the deadline moves earlier (or when it fires before the deadline).
    clock::time_point deadline_ = clock::time_point::max();
    deadline_kind deadline_kind_ = deadline_kind::none;
    clock::time_point timer_at_ = clock::time_point::max();
    bool timer_armed_ = false;
};

}  // namespace tern::detail

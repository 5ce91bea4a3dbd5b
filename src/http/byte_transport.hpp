#pragma once
// The seam between a connection's bytes and the protocol that reads them. The byte
// transport (src/net/transport.hpp: a TCP or Unix socket, TLS, the PROXY header) reads,
// writes, sends files and keeps the connection's one deadline; the protocol over it (HTTP/1
// in src/http1, and what HTTP/1 hands the connection to: HTTP/2, WebSocket) decides what the
// bytes mean. The transport knows no protocol: which one serves a connection is chosen once,
// by the `protocol_opener` the app gives the server (ALPN's choice), and after that only by
// the protocol itself handing the transport over (`byte_transport::hand_over`: the h2c
// preface, a 101). docs/architecture.md, "The byte transport and the protocols over it".

#include "http/response.hpp"

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <system_error>

namespace tern::detail {

class protocol_host;

/// Which deadline the transport's one timer stands for.
enum class deadline_kind { none, idle, header, body, write, linger, stream_idle, handshake };

/// What a protocol hears from the transport it runs over, on the loop thread. Each call comes
/// from a handler of the transport's (readiness, the timer, a posted read), except
/// `on_written`, which may come inside `byte_transport::write` (the socket took it all).
class transport_user {
public:
    virtual ~transport_user() = default;
    /// The transport is this protocol's from now on (it was opened, or handed over).
    virtual void start() = 0;
    /// A read ended: `n` bytes in the transport's read buffer, or the peer's end or an error.
    virtual void on_read(std::error_code ec, std::size_t n) = 0;
    /// The output buffer and the file after it are written (or the write failed).
    virtual void on_written(std::error_code ec) = 0;
    /// The socket became readable while the protocol waited for that alone (`wait_readable`).
    virtual void on_readable() {}
    /// The deadline set last has passed.
    virtual void on_deadline(deadline_kind kind) = 0;
    /// Server stop: close now if between requests; otherwise finish what is in progress.
    virtual void stop_when_idle() = 0;
    /// The server has begun to stop (before its grace period): warn the peer if the protocol
    /// can (HTTP/2's shutdown notice).
    virtual void begin_closing() {}
    /// The transport closes (whoever asked): nothing more reaches the peer; let go of what
    /// waits for it. Once; `close` calls made from here do nothing.
    virtual void on_close() noexcept = 0;
};

/// One connection's bytes, as a protocol uses them. Loop thread only. What a request reads
/// of it (the client, the buffers) is plain data here, not a virtual call.
class byte_transport {
public:
    using clock = std::chrono::steady_clock;

    /// Closes the socket now (close_notify first under TLS): `on_close` first, then pending
    /// waits end. Once.
    virtual void close() noexcept = 0;
    bool closed() const noexcept { return closed_; }
    /// Gives the connection to another protocol, which `start`s now; the caller hears
    /// nothing more from it (a 101, the h2c preface).
    virtual void hand_over(std::shared_ptr<transport_user> next) = 0;

    /// The client: its address (the PROXY header's source when there was one, "unix" on a
    /// Unix socket), TLS, a verified client certificate's subject.
    const std::string& remote_ip() const noexcept { return remote_ip_; }
    bool secure() const noexcept { return secure_; }
    const std::string& client_subject() const noexcept { return client_subject_; }

    /// The next bytes go to `on_read` (once). Nothing is tried now: a plain read waits for
    /// the poller to tell of an arrival (after a response the next request has almost never
    /// come).
    virtual void read() = 0;
    /// Cancels a read (and a `wait_readable`).
    virtual void stop_reading() noexcept = 0;
    /// The loop's read buffer, where `on_read`'s bytes are until its handler returns.
    std::span<char> read_buffer() const noexcept { return read_buffer_; }
    /// Where the next reads put their bytes: the protocol's own buffer (a streamed request
    /// body, whose pieces must outlive the read's handler), or the loop's again
    /// (`read_buffer()` from before). The buffer must outlive every read into it.
    void read_into(std::span<char> buffer) noexcept { read_buffer_ = buffer; }
    /// Looks at the socket without taking a byte: 1 when bytes wait, 0 at the peer's end or
    /// an error, -1 when there is nothing yet.
    virtual int peek() noexcept = 0;
    /// `on_readable` once the socket becomes readable (after `peek` said -1).
    virtual void wait_readable() = 0;

    /// What the next write sends, then `file()`. The protocol appends to it between writes.
    std::string& out() noexcept { return out_; }
    /// A file body sent after `out()`.
    file_body& file() noexcept { return file_; }
    /// Writes `out()` then `file()`, then `on_written`. A write waits under the write
    /// deadline, which moves on with each piece the client takes.
    virtual void write() = 0;
    /// The write deadline becomes at most `t` (a refused connection's 503).
    virtual void shorten_write_timeout(std::chrono::milliseconds t) noexcept = 0;
    /// Sends nothing more: close_notify under TLS, then the TCP FIN; reads go on.
    virtual void shutdown_sending() noexcept = 0;
    /// After a last answer the peer may still be sending (an error response before the whole
    /// request was read): sends nothing more, discards what arrives until the peer closes or
    /// two seconds pass, then closes. The protocol hears nothing more but `on_close`. Closing
    /// at once instead would reset the connection and could destroy the answer in flight.
    virtual void linger() = 0;

    /// The one deadline: `on_deadline(kind)` when it passes.
    virtual void set_deadline(clock::duration after, deadline_kind kind) = 0;
    virtual void set_deadline_at(clock::time_point when, deadline_kind kind) = 0;
    /// No deadline.
    virtual void clear_deadline() noexcept = 0;
    /// Runs `fn` on the loop, in a handler of its own.
    virtual void post(std::function<void()> fn) = 0;

protected:
    ~byte_transport() = default;

    std::string out_;  // bytes waiting for the next write
    file_body file_;   // a file body to send after out_
    std::span<char> read_buffer_;
    std::string remote_ip_;
    std::string client_subject_;  // of a verified client certificate (mutual TLS)
    bool secure_ = false;         // TLS
    bool closed_ = false;
};

/// How a connection is opened for its protocol.
struct opening {
    enum class mode {
        serve,              ///< serve requests
        refuse_busy,        ///< over max_concurrent_connections: answer 503 and close
        refuse_plain_http,  ///< plain HTTP on the TLS port: say so in plain text and close
    };
    mode what = mode::serve;
    std::string_view alpn;            ///< what TLS agreed on; empty for none and for plain
    std::uint16_t redirect_port = 0;  ///< the plain listener's redirect to HTTPS (0: none)
};

/// Makes the protocol that serves a connection (the app gives the server src/http1's
/// `open_protocol`). The transport `start`s it, or closes the connection when it is null
/// (the protocol could not start, and said why).
using protocol_opener = std::shared_ptr<transport_user> (*)(std::shared_ptr<byte_transport> io,
                                                            protocol_host& host,
                                                            const opening& how);

/// Whether HTTP/2 can be served now (src/http1's `h2_ready`, given by the
/// app). Asked when a TLS client offers h2 in ALPN: when it says no, the connection is
/// agreed in http/1.1 instead of being opened in h2 and closed. Any thread.
using h2_ready_check = bool (*)() noexcept;

}  // namespace tern::detail

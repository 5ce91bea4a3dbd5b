#pragma once
// One client connection's bytes: the socket (TCP or Unix), its readiness on the worker's
// poller, the PROXY header and the TLS handshake before any protocol byte, plain or TLS reads
// and writes, file bodies (sendfile(2), or pieces through OpenSSL), the one deadline timer,
// and the close. It knows no protocol: once open it asks the app's protocol_opener for the
// protocol that serves it (src/http/byte_transport.hpp) and hands it every read, the end of
// every write and every deadline (docs/architecture.md, "The byte transport and the
// protocols over it").

#include "http/byte_transport.hpp"
#include "http/file_handle.hpp"
#include "net/deadline_heap.hpp"
#include "net/socket_poller.hpp"
#include "platform/socket_api.hpp"
#include "tls/channel.hpp"

#include <asio/ip/tcp.hpp>

#include <chrono>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <system_error>

namespace tern::detail {

class worker;

/// A connection's transport: owned by the handlers that wait on it (shared_ptr) and by its
/// protocol, which it owns in turn until it closes; listed by its worker for stop and limits.
class transport final : public byte_transport,
                        public std::enable_shared_from_this<transport>,
                        public deadline_entry,
                        private poll_target {
public:
    using clock = byte_transport::clock;  // deadline_entry has the same one
    /// Takes the socket out of asio's hands into the worker's poller.
    transport(asio::ip::tcp::socket socket, worker& owner);
    ~transport();
    transport(const transport&) = delete;
    transport& operator=(const transport&) = delete;

    /// Starts: the PROXY header first (config::proxy_protocol), then the TLS handshake with
    /// `tls` (null: plain), then the protocol. With a `redirect_port`, every request is
    /// answered with a redirect to HTTPS on that port.
    void start(std::shared_ptr<const tls_context> tls, std::uint16_t redirect_port);
    /// Answers 503 (over max_concurrent_connections) and closes; serves no request.
    void refuse();
    /// Server stop: the protocol closes the connection now if it is between requests, or
    /// finishes what is in progress; one still opening closes now.
    void stop_when_idle();
    /// The server has begun to stop (before its grace period): the protocol may warn its
    /// peer (HTTP/2's shutdown notice).
    void begin_closing();

    // byte_transport
    void close() noexcept override;
    void hand_over(std::shared_ptr<transport_user> next) override;
    void read() override;
    void stop_reading() noexcept override;
    int peek() noexcept override;
    void wait_readable() override;
    void write() override;
    void shorten_write_timeout(std::chrono::milliseconds t) noexcept override;
    void shutdown_sending() noexcept override;
    void linger() override;
    void set_deadline(clock::duration after, deadline_kind kind) override;
    void set_deadline_at(clock::time_point when, deadline_kind kind) override;
    void clear_deadline() noexcept override {
        deadline_ = clock::time_point::max();
        deadline_kind_ = deadline_kind::none;
    }
    void post(std::function<void()> fn) override;

    /// The worker, on the loop: the time this transport's deadline was scheduled for has
    /// passed (the deadline itself may have moved later since).
    void deadline_due();

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

    // The protocol: made by the app's opener, then started.
    void open_protocol(opening::mode what, std::string_view alpn);
    void opened(std::string_view alpn);
    void open_failed(bool plain_http);
    void read_now();
    // A read's end: to the protocol, or discarded while lingering.
    void deliver_read(std::error_code ec, std::size_t n);
    void write_some();
    void written(std::error_code ec);
    void send_file();
    void file_ready();
    ssize_t send_file_chunk(std::size_t n);
    // Reads the next piece of the file (at most n bytes, 64 KiB) into the worker's file
    // buffer: its size, or -1 with errno (EIO when the file ended early).
    ssize_t read_file_piece(std::size_t n);

    // The PROXY protocol header (transport_proxy.cpp).
    void read_proxy_header();
    void on_proxy_bytes();
    // TLS (transport_tls.cpp): the handshake, then reads and writes through the channel.
    void start_handshake();
    void hello_arrived();
    void continue_handshake();
    void end_handshake(bool completed, const char* failure) noexcept;
    void tls_read();
    void tls_write_some();
    ssize_t tls_send_file_chunk(std::size_t n);
    // Waits for the readiness a TLS call that could not go on asked for, then runs `fn`.
    void tls_wait(tls_channel::status want, ready_fn fn);

    platform::socket_handle socket_;  // non-blocking, watched by the worker's poller
    worker& owner_;
    std::shared_ptr<transport_user> user_;  // null until open, and after the close
    std::size_t written_ = 0;               // bytes of out_ already written
    std::chrono::milliseconds write_timeout_;
    bool sendfile_unsupported_ = false;
    bool opening_ = false;
    bool reading_ = false;  // a read is outstanding
    bool writing_ = false;
    bool lingering_ = false;  // linger(): reads are discarded until the peer's end
    std::uint16_t redirect_port_ = 0;
    // HTTPS: the TLS channel (null on plain HTTP), and the context to start it with once the
    // PROXY header is read. The handshake holds one of the worker's handshake slots until it
    // ends; the last TLS write that could not go on said which readiness it waits for.
    std::shared_ptr<const tls_context> tls_context_;
    std::unique_ptr<tls_channel> tls_;
    bool handshake_counted_ = false;
    tls_channel::status tls_write_wants_ = tls_channel::status::want_write;
    clock::time_point accepted_at_{};
    std::string proxy_bytes_;  // config::proxy_protocol: the header's bytes so far

    // Readiness: the socket is in the poller's set; what it is known to have (bytes, room,
    // the peer's end) since it was last found empty or full; the waiters; and the user's
    // self while one waits (the poller knows the transport by a plain pointer).
    bool polled_ = false;
    bool can_read_ = false;
    bool can_write_ = true;
    bool ended_ = false;
    waiters on_readable_;
    waiters on_writable_;
    std::shared_ptr<transport> ready_hold_;

    // One deadline serves every phase: the logical one lives here, and its place in the
    // worker's deadline heap (the deadline_entry base) only moves when it moves earlier (or
    // when that place comes due before it).
    clock::time_point deadline_ = clock::time_point::max();
    deadline_kind deadline_kind_ = deadline_kind::none;
};

}  // namespace tern::detail

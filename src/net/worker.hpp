#pragma once
// One event loop thread: its io_context, its acceptor on the shared port (SO_REUSEPORT), and
// the connections it accepted. Without SO_REUSEPORT balancing (TERN_IO=portable) only the
// first worker has an acceptor, and it hands connections to the loops in turn. Nothing here is
// shared with other workers except the server's read-only settings and its atomic connection
// count.

#include "http/byte_transport.hpp"
#include "http/datagram_port.hpp"
#include "http/parser.hpp"
#include "http/protocol_host.hpp"
#include "http/request_handler.hpp"
#include "net/datagram_socket.hpp"
#include "net/deadline_heap.hpp"
#include "net/door.hpp"
#include "net/fd_waits.hpp"
#include "net/socket_poller.hpp"
#include "net/waitable.hpp"
#include "tls/context.hpp"

#include <tern/config.hpp>
#include <tern/stats.hpp>

#include <asio/io_context.hpp>
#include <asio/ip/tcp.hpp>
#include <asio/steady_timer.hpp>

#include <atomic>
#include <condition_variable>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <span>
#include <unordered_set>
#include <vector>

namespace tern::detail {

class transport;

/// State the workers of one server share: settings (read-only while running), the handler,
/// and counters that are touched once per connection, never per request.
struct shared_state {
    const config& settings;
    parser_limits limits;
    request_handler& handler;
    // Makes the protocol of each connection once its transport is open (src/http1's
    // open_protocol, given by the app): net knows no protocol.
    protocol_opener open_protocol;
    // Whether HTTP/2 can be served now, asked before TLS agrees on h2 (src/http1's h2_ready,
    // given by the app); null: never h2 over TLS.
    h2_ready_check h2_ready = nullptr;
    // Makes the protocol over the datagram socket (src/h3's open_datagrams, given by the app
    // when it serves HTTP/3); null: none.
    datagram_opener open_datagrams = nullptr;
    // HTTPS: the certificates new connections start with; null for plain HTTP. Each worker
    // keeps its own copy, replaced on its thread by a reload (server::reload_tls).
    std::shared_ptr<const tls_context> tls{};
    // The bound on all spooled request bodies (config::max_spooled_bytes); limits points
    // at it, and each spooled body shares it, so it outlives them.
    std::shared_ptr<spool_quota> spool_space{};
    std::uint16_t https_port = 0;  // where the plain listener redirects to (set at start)
    std::atomic<std::size_t> open_connections{0};
    std::atomic<bool> stopping{false};
    // Set when a stop begins, before the grace period (health_config::grace) and the stop
    // itself: HTTP/1 responses close their connections from then on.
    std::atomic<bool> closing_connections{false};
    // The drain: each worker reports once, when it has no connection left after a stop.
    // `stragglers`: some worker still waits then for a blocking handler's answer.
    std::mutex drain_mutex{};
    std::condition_variable drained_cv{};
    std::size_t drained_workers = 0;
    bool stragglers = false;
};

/// An event loop with its acceptor and connections.
class worker final : private timer_service, public protocol_host {
public:
    explicit worker(shared_state& shared);
    ~worker();
    worker(const worker&) = delete;
    worker& operator=(const worker&) = delete;

    /// Opens this worker's acceptor on `endpoint` with SO_REUSEPORT on Linux (and
    /// dual-stack when `endpoint` is IPv6's any address). Throws std::system_error.
    void bind(const asio::ip::tcp::endpoint& endpoint);
    /// Before run(), on the portable path: this worker's acceptors are the only ones, and
    /// hand what they accept to `loops` (this one among them) in turn.
    void hand_out_to(std::vector<worker*> loops);
    /// Accepts from a duplicate of the listening socket `fd` (an IPv6 one when `ipv6`), made
    /// and owned elsewhere (the duplicate is this worker's to close). Throws
    /// std::system_error.
    void adopt(int fd, bool ipv6);
    /// With HTTPS: opens the plain-HTTP acceptor beside it (tls_config::http_port).
    void bind_plain(const asio::ip::tcp::endpoint& endpoint);
    /// Opens the UDP socket of HTTP/3 on `host`:`port` (SO_REUSEPORT), as the next socket of
    /// `group`, with the protocol shared.open_datagrams makes. Throws std::system_error when it
    /// cannot bind, std::invalid_argument when the protocol cannot be made.
    void bind_datagrams(const std::string& host, std::uint16_t port, datagram_group& group);
    /// The endpoint the acceptor is bound to.
    asio::ip::tcp::endpoint local_endpoint() const;
    /// The endpoint the plain-HTTP acceptor is bound to.
    asio::ip::tcp::endpoint plain_endpoint() const;
    /// Runs the event loop until the worker has stopped (call on the worker's thread).
    void run();
    /// Thread-safe: begins the graceful stop on the worker's own thread.
    void post_stop();
    /// Thread-safe: a stop has begun (closing_connections is set, before any grace
    /// period): the worker's connections are told on its own thread, so that protocols
    /// that can warn their peers do so at once (HTTP/2's GOAWAY shutdown notice).
    void post_closing();
    /// Thread-safe: runs `fn` on the worker's own thread (the completion of a deferred
    /// request). Every call matches one earlier `expect_posted()`.
    void post(std::function<void()> fn) override;
    /// On the worker's thread: a `post()` will come (a request was deferred). The loop
    /// keeps running, even after a stop, until it has arrived.
    void expect_posted() override;
    /// On the worker's thread: the `post()` an `expect_posted()` announced will not come
    /// (the deferred work was taken back before it started).
    void unexpect_posted() noexcept override;
    /// The door into this loop, for work that may outlive the worker (held responses,
    /// streamed bodies): posts through it are not waited for at stop.
    std::shared_ptr<loop_door> door() override { return door_; }

    // For connections, on the worker's thread: settings(), limits(), handler(), app_state(),
    // stopping(), closing_connections() and the request counters are protocol_host's.
    /// The readiness of this loop's connection sockets.
    socket_poller& poller() noexcept { return poller_; }
    /// The loop's read buffer: what a connection reads into it is its own until the handler
    /// that read it returns (then the next connection's read overwrites it).
    std::span<char> read_buffer() noexcept { return {read_buffer_.get(), read_buffer_size}; }
    /// The loop's buffer for pieces of file bodies (read from the file, then sent at once;
    /// a piece the socket did not take whole is read again from its offset next time).
    std::span<char> file_buffer();
    /// The loop's executor, for the connections' posts.
    asio::io_context::executor_type executor() noexcept { return io_context_.get_executor(); }
    /// A connection's deadline at `when` (or moved there): its `deadline_due()` runs on the
    /// loop once it has passed. One timer serves them all (deadline_heap.hpp).
    void schedule(transport& c, std::chrono::steady_clock::time_point when);
    /// The connection's deadline is no longer waited for (at its close, at the latest).
    void unschedule(transport& c) noexcept;
    /// Removes a closed connection from this worker's list.
    void forget(transport* c) noexcept;
    /// Makes the protocol of a connection whose transport is open.
    std::shared_ptr<transport_user> open_protocol(std::shared_ptr<byte_transport> io,
                                                  const opening& how) {
        return shared_.open_protocol(std::move(io), *this, how);
    }
    /// Fewer than the reserve of descriptors (fd_reserve) are left under RLIMIT_NOFILE: new
    /// HTTP/2 streams are refused. Looked up at most every few milliseconds.
    bool short_of_descriptors() noexcept override;
    /// Counts a socket write (on the worker's thread).
    void count_write() noexcept { bump(writes_); }
    /// Counts bytes read from a connection (on the worker's thread; decrypted under TLS).
    void count_received(std::size_t n) noexcept { bump(bytes_received_, n); }
    /// Counts bytes written to a connection (on the worker's thread; before encryption).
    void count_sent(std::size_t n) noexcept { bump(bytes_sent_, n); }
    /// Adds this worker's counters to `into` (from any thread).
    void add_stats(server_stats& into) const noexcept;

    // TLS, on the worker's thread.
    /// A reload's new certificates, for the connections accepted from now on.
    void set_tls(std::shared_ptr<const tls_context> tls) noexcept { tls_ = std::move(tls); }
    /// A connection's hello began to arrive: takes a slot of tls_config::max_handshakes, or
    /// counts the connection as refused and says false when every slot is taken.
    bool take_handshake_slot() noexcept;
    /// A handshake ended: `failure` is OpenSSL's reason when it failed on a protocol error
    /// (logged, at most one line a second per worker), null when it completed or the
    /// client left.
    void handshake_ended(bool completed, const char* failure, std::string_view remote_ip) noexcept;

private:
    void after(std::chrono::nanoseconds delay, std::function<void(bool fired)> fn) override;
    void cancel_timers() noexcept;
    // The connections' deadlines: the timer at the earliest, and what is due when it fires.
    void arm_deadlines();
    void run_deadlines();
    // One listening socket: the app's (HTTPS when TLS is on) or the plain one beside it.
    struct listener {
        explicit listener(asio::io_context& io) : acceptor(io), retry(io) {}
        asio::ip::tcp::acceptor acceptor;
        asio::steady_timer retry;  // after EMFILE and the like
        bool plain = false;        // the plain-HTTP listener beside HTTPS
        bool adopted = false;      // a duplicate of a socket made elsewhere (adopt)
    };
    // At most this many queued connections are taken at a stop (take_queued).
    static constexpr std::size_t max_queued_at_stop = 4096;
    void accept(listener& l);
    // A connection `l` accepted: served here, or handed to the next loop (hand_out_to).
    void hand_out(const listener& l, asio::ip::tcp::socket socket);
    void accepted(bool plain, asio::ip::tcp::socket socket);
    void take_queued(listener& l);
    void open_listener(listener& l, const asio::ip::tcp::endpoint& endpoint);
    void wait_for_messages();
    void on_messages();
    void stop();
    void check_drained() noexcept;
    // The stop drains HTTP/3: polled until no answer is under way, then ended (the protocol
    // closes its connections, the socket closes).
    void poll_datagrams();
    void end_datagrams() noexcept;
    void report_drained() noexcept;

    // Written by the worker's thread only, read by any: a relaxed load and store (a plain
    // increment, no locked instruction) keeps reads well-defined without a shared counter.
    static void bump(std::atomic<std::uint64_t>& c, std::uint64_t by = 1) noexcept {
        c.store(c.load(std::memory_order_relaxed) + by, std::memory_order_relaxed);
    }

    shared_state& shared_;
    // The application's per-loop state (request_handler::make_loop_state): outlives every
    // connection and the loop (declared early, destroyed late).
    const std::unique_ptr<loop_state> app_state_;
    std::unordered_set<transport*> connections_;  // outlives io_context_ (declared first)
    // The connections' deadlines, earliest first (outlives io_context_: a connection let go
    // while the loop's handlers are destroyed takes its own out), the timer that waits for
    // the earliest (after io_context_), and the connections due at its last firing.
    deadline_heap deadlines_;
    std::vector<std::shared_ptr<transport>> due_;
    std::chrono::steady_clock::time_point deadline_timer_at_ =
        std::chrono::steady_clock::time_point::max();
    bool deadline_timer_armed_ = false;
    bool ending_ = false;  // ~worker has begun: the timer may be gone
    // One thread runs this loop, and every socket, timer and handler queue on it is touched
    // only from that thread: so neither the scheduler nor the reactor needs locks. Messages
    // from other threads (stop, and the completions of deferred requests) come through a
    // pipe: the sender sets a flag or queues a function, then writes a byte.
    asio::io_context io_context_{ASIO_CONCURRENCY_HINT_UNSAFE};
    waitable wake_{io_context_};  // the wake channel's read end (a pipe's on POSIX)
    socket_poller poller_{io_context_};
    // Coroutines' waits for the application's own descriptors (loop_door::wait_fd), on
    // poller_ and the timers below; dropped when the drain ends.
    fd_waits fd_waits_{poller_, *this};
    // HTTP/3's UDP socket and the protocol over it (bind_datagrams; every worker's on one
    // port): the protocol is destroyed first, and tells its peers so through the socket.
    std::unique_ptr<datagram_socket> datagrams_;
    std::unique_ptr<datagram_receiver> datagram_protocol_;
    asio::steady_timer datagram_poll_{io_context_};  // while the stop drains it
    // One buffer for every read of this loop, instead of one per connection: an idle
    // keep-alive connection then holds no read buffer at all.
    static constexpr std::size_t read_buffer_size = 16 * 1024;
    std::unique_ptr<char[]> read_buffer_{new char[read_buffer_size]};
    static constexpr std::size_t file_buffer_size = 64 * 1024;
    std::unique_ptr<char[]> file_buffer_;  // made at the first file body
    platform::native_socket wake_write_ = platform::invalid_socket;
    bool waiting_for_messages_ = false;
    std::atomic<bool> stop_posted_{false};
    bool closing_told_ = false;  // the connections heard that a stop began (post_closing)
    // Taken only by deferred requests and streams, never on the common path. Shared: a
    // handle kept after the loop ended posts into it and is refused.
    std::shared_ptr<worker_door> door_;
    std::size_t expected_posts_ = 0;  // deferred requests not completed yet
    listener main_{io_context_};
    listener plain_{io_context_};
    // The portable path: the loops this one's acceptors serve (hand_out_to), and the next.
    std::vector<worker*> loops_;
    std::size_t next_loop_ = 0;
    // Timers armed through the door (coroutine sleeps), cancelled when the drain ends.
    std::list<asio::steady_timer> timers_;
    asio::steady_timer drain_timer_{io_context_};
    asio::steady_timer deadline_timer_{io_context_};
    bool draining_ = false;
    bool reported_drained_ = false;
    std::atomic<std::uint64_t> accepted_{0}, refused_{0}, requests_{0}, writes_{0};
    std::atomic<std::uint64_t> h2_connections_{0}, h2_requests_{0};
    std::atomic<std::uint64_t> h3_connections_{0}, h3_requests_{0};
    std::atomic<std::uint64_t> handshakes_{0}, handshake_failures_{0};
    std::atomic<std::uint64_t> bytes_received_{0}, bytes_sent_{0};
    std::shared_ptr<const tls_context> tls_;
    std::size_t handshakes_in_progress_ = 0;
    // Descriptors: a new descriptor numbered at or above fd_short_at_ means fewer than the
    // reserve are left (Linux hands out the lowest free number), so new work is refused
    // with an answer (503, REFUSED_STREAM) while files can still be opened for the work in
    // progress. The last look, for HTTP/2 streams, is kept for fd_look_interval.
    int fd_short_at_ = 0;
    bool fd_short_ = false;
    std::chrono::steady_clock::time_point fd_looked_at_{};
    // The failure log's rate limit: when the last line went out, failures not logged since.
    std::chrono::steady_clock::time_point last_failure_line_{};
    std::uint64_t unlogged_failures_ = 0;
};

}  // namespace tern::detail

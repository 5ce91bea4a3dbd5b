#pragma once
// What the protocols of a connection (HTTP/1, HTTP/2; src/http1, src/h2) need from the
// event loop they run on. Implemented by the worker (src/net/worker.hpp), which outlives its
// connections, their protocols and their posted resumes; loop thread only unless it says.

#include "http/exchange_port.hpp"
#include "http/parser.hpp"
#include "http/request_handler.hpp"

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>

namespace tern {
struct config;
}  // namespace tern

namespace tern::detail {

class protocol_host {
public:
    // What every request reads: plain loads, not virtual calls (the worker points them at its
    // own state once, when it is made).
    request_handler& handler() const noexcept { return *loop_.handler; }
    /// The application's state for this loop, given back with each request.
    loop_state& app_state() const noexcept { return *loop_.app_state; }
    const tern::config& settings() const noexcept { return *loop_.settings; }
    const parser_limits& limits() const noexcept { return *loop_.limits; }
    /// The server stops: answers close their connections, work not started is refused.
    bool stopping() const noexcept { return loop_.stopping->load(std::memory_order_relaxed); }
    /// A stop has begun (its grace period included): HTTP/1 responses close their
    /// connections.
    bool closing_connections() const noexcept {
        return loop_.closing->load(std::memory_order_relaxed);
    }
    /// A request answered (for the server's counters): written by the loop's thread alone,
    /// so a relaxed load and store, no locked instruction.
    void count_request() noexcept { bump(*loop_.requests); }
    /// A request answered on an HTTP/2 stream (counted in requests too).
    void count_h2_request() noexcept {
        bump(*loop_.requests);
        bump(*loop_.h2_requests);
    }
    /// A connection switched to HTTP/2.
    void count_h2_connection() noexcept { bump(*loop_.h2_connections); }
    /// A request answered on an HTTP/3 stream (counted in requests too).
    void count_h3_request() noexcept {
        bump(*loop_.requests);
        bump(*loop_.h3_requests);
    }
    /// A QUIC connection completed its handshake and speaks HTTP/3.
    void count_h3_connection() noexcept { bump(*loop_.h3_connections); }

    /// The door into this loop, for work that may outlive the worker (held responses,
    /// streamed bodies): posts through it are not waited for at stop.
    virtual std::shared_ptr<loop_door> door() = 0;
    /// The process is close to its descriptor limit (RLIMIT_NOFILE): new HTTP/2 streams are
    /// refused (REFUSED_STREAM) rather than run. Never, unless the host says so.
    virtual bool short_of_descriptors() noexcept { return false; }
    /// A deferred request's resume will be posted (the loop runs until it comes back).
    virtual void expect_posted() = 0;
    /// It will not (the work was taken back).
    virtual void unexpect_posted() noexcept = 0;
    /// Any thread: `fn` runs on the loop. Every call matches one earlier `expect_posted()`.
    virtual void post(std::function<void()> fn) = 0;

protected:
    ~protocol_host() = default;
    static void bump(std::atomic<std::uint64_t>& c) noexcept {
        c.store(c.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    }
    // What the accessors above read: set by the implementation before any protocol runs.
    struct loop_view {
        request_handler* handler = nullptr;
        loop_state* app_state = nullptr;
        const tern::config* settings = nullptr;
        const parser_limits* limits = nullptr;
        const std::atomic<bool>* stopping = nullptr;
        const std::atomic<bool>* closing = nullptr;
        std::atomic<std::uint64_t>* requests = nullptr;
        std::atomic<std::uint64_t>* h2_requests = nullptr;
        std::atomic<std::uint64_t>* h2_connections = nullptr;
        std::atomic<std::uint64_t>* h3_requests = nullptr;
        std::atomic<std::uint64_t>* h3_connections = nullptr;
    };
    loop_view loop_{};
};

}  // namespace tern::detail

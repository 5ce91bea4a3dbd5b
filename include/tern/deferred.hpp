#pragma once
/// @file deferred.hpp
/// A response completed after the handler returned (`context::defer`).

#include <tern/export.hpp>

#include <chrono>
#include <exception>
#include <functional>
#include <memory>

namespace tern {

class context;

/// What a wait for a descriptor's readiness came to (`co_await tern::wait_readable`,
/// `deferred::when_readable`, and their writable twins).
enum class io_ready {
    ready,      ///< the descriptor is readable (writable); or its peer's end or an error is
                ///< there for the next read or write to report
    timed_out,  ///< the timeout passed first
    cancelled,  ///< the client left (or the response can no longer be sent)
};

namespace detail {
class held_exchange;
struct deferred_token;
}  // namespace detail

/// The handle of a response that a handler took over with `context::defer()`: complete it
/// later, from any thread. Copies refer to the same request; the first `complete` or
/// `fail` wins, and when the last copy is gone without either, the client gets a 500 (never
/// a hung connection). After filters, error handlers, CORS, compression and the request
/// logger apply to the late response as to an immediate one. Holding it holds no thread:
/// the connection waits on its event loop, and requests pipelined behind it wait in order.
///
///     app.get("/later", [](tern::context& ctx) {
///         auto reply = ctx.defer();
///         queue.push([reply] { reply.complete([](tern::context& c) { c.text("done"); }); });
///     });
class TERN_API deferred {
public:
    /// An empty handle (refers to no request).
    deferred() noexcept = default;

    /// Completes the response: `fill` (when given) runs on the connection's thread with the
    /// request's context, as the handler would have (an exception it throws is mapped as a
    /// handler's), then the rest of the chain runs and the response is sent. Any thread.
    /// False when the response was already completed, the client has left, or the server
    /// has stopped (then nothing is sent and `fill` does not run).
    bool complete(std::function<void(context&)> fill = {}) const;
    /// Completes the response with `error`, mapped as if the handler had thrown it (the
    /// app's exception mappers, an http_error's status, else 500). Any thread. False as for
    /// `complete`.
    bool fail(std::exception_ptr error) const;
    /// True once the response can no longer be sent: the client left, or the server's drain
    /// deadline passed. A long computation may check it and stop early.
    bool cancelled() const noexcept;
    /// Runs `fn` on the connection's thread when the response can no longer be sent (at
    /// most once; at once, on this thread, when that has already happened). Not run once
    /// the response has been completed.
    void on_cancel(std::function<void()> fn) const;
    /// Runs `fn(io_ready::ready)` on the connection's thread once `fd` (a descriptor the
    /// application owns, in non-blocking mode: a database client's socket) is readable;
    /// `fn(timed_out)` after `timeout` (zero: none); `fn(cancelled)` when the client leaves
    /// meanwhile, or at once when it has left. No thread waits (docs/async.md). Any thread;
    /// one wait per descriptor at a time on a loop. When the descriptor cannot be watched (a
    /// regular file, a second wait on it, not open), the response fails instead (500,
    /// mapped as a handler's exception) and `fn` does not run; what `fn` throws fails it the
    /// same way. tern never reads, writes or closes the descriptor.
    void when_readable(int fd, std::chrono::nanoseconds timeout,
                       std::function<void(io_ready)> fn) const;
    /// As when_readable, until `fd` has room to write.
    void when_writable(int fd, std::chrono::nanoseconds timeout,
                       std::function<void(io_ready)> fn) const;
    /// Whether this handle refers to a request.
    explicit operator bool() const noexcept { return token_ != nullptr; }

    /// Built by `context::defer`.
    explicit deferred(std::shared_ptr<detail::held_exchange> state);

private:
    std::shared_ptr<detail::deferred_token> token_;
};

}  // namespace tern

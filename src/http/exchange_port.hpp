#pragma once
// How a response that outlives its handler reaches the transport (docs/architecture.md,
// "Responses that outlive the handler"): the loop door (into an event loop from any thread),
// the exchange port (one request's way back to its transport), the held link (told when a
// held request can no longer be answered) and the body source (a streamed body, pulled by
// the transport). Interfaces only: the transport (src/net) implements the door and the
// port, src/handling the link and the source; neither sees the other.

#include "http/response.hpp"
#include "http/trailer_fields.hpp"

#include <tern/header_field.hpp>

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>

namespace tern::detail {

/// The way into one event loop. Shared by everything that may outlive the loop, so that a
/// handle kept after the server stopped posts into a closed door instead of freed memory.
/// What a wait for a descriptor's readiness came to (loop_door::wait_fd).
enum class fd_wait_end {
    ready,      ///< readable (or writable), or the peer's end or an error is there to read
    timed_out,  ///< its timeout passed first
    cancelled,  ///< fd_wait::cancel
};

/// A descriptor wait under way (loop_door::wait_fd). Loop thread only.
class fd_wait {
public:
    virtual ~fd_wait() = default;
    /// Ends the wait with `cancelled` (nothing when it has ended).
    virtual void cancel() noexcept = 0;
};

class loop_door {
public:
    virtual ~loop_door() = default;
    /// Any thread: `fn` runs on the loop. False once the loop has ended (`fn` never runs).
    virtual bool post(std::function<void()> fn) = 0;
    /// Loop thread only: `fn(true)` runs on the loop after `delay`; `fn(false)` instead when
    /// the timer is cancelled because the loop is ending (at once when it has ended).
    virtual void after(std::chrono::nanoseconds delay, std::function<void(bool fired)> fn) = 0;
    /// Loop thread only: `fn(ready)` once `fd` (the application's, not owned) is readable,
    /// or writable when `write`; `fn(timed_out)` after `timeout` (none when zero or less);
    /// `fn(cancelled)` on the handle's cancel(). Called at most once, from the loop's own
    /// callbacks. When the loop's drain ends (or it has ended) `fn` is destroyed uncalled.
    /// Throws std::system_error when the descriptor cannot be watched (EPERM: a regular
    /// file; EBADF; EMFILE: no descriptor left for tern's duplicate).
    virtual std::shared_ptr<fd_wait> wait_fd(int fd, bool write, std::chrono::nanoseconds timeout,
                                             std::function<void(fd_wait_end)> fn) = 0;
};

/// Told by the transport, on the loop, that a held request will never be answered: the
/// client left, or the server's drain deadline passed. Called at most once.
class held_link {
public:
    virtual ~held_link() = default;
    virtual void abandon() noexcept = 0;
};

/// What `body_source::pull` found.
enum class pull_status {
    more,     ///< the stream goes on; when nothing was appended, `wake()` comes with more
    ended,    ///< everything was appended: the body is complete
    aborted,  ///< the body cannot be completed: cut the response off (no final chunk)
};

class exchange_port;

/// A response body produced while it is sent (a stream, Server-Sent Events). Implemented by
/// the application side; the transport pulls it on the loop when its output has room.
class body_source {
public:
    virtual ~body_source() = default;
    /// Loop: the head is out; `port` is the transport to wake (through `door`) when bytes
    /// arrive after a pull found none. Called once, before any pull.
    virtual void attach(std::shared_ptr<loop_door> door, std::weak_ptr<exchange_port> port) = 0;
    /// Loop: appends up to `max` bytes of body to `out` (an unframed body: the transport
    /// frames it).
    virtual pull_status pull(std::string& out, std::size_t max) = 0;
    /// Loop: the transport pulls no more: the body ended or was cut off, the client left, a
    /// deadline passed, or it was a HEAD. Called once.
    virtual void closed() noexcept = 0;
    /// Loop, once `pull` said `ended`, before `closed`: the trailer fields the producer set
    /// (`response_stream::trailer`) are set in `into`, which holds the response's own
    /// (`ctx.trailer`). Asked only by a transport that can send them.
    virtual void take_trailers(trailer_list& /*into*/) {}
    /// How long the stream may be silent before `on_idle` (zero: no idle calls).
    virtual std::chrono::milliseconds idle_interval() const noexcept { return {}; }
    /// Loop: the stream has been silent for `idle_interval` (an SSE keep-alive comment).
    virtual void on_idle() {}
    /// Any thread: the producer cut the body off (the transport closes the connection
    /// without waiting for its writes).
    virtual bool cut_off() const noexcept { return false; }
    /// Loop: the server stops. True when the source ended itself (it is an endless stream,
    /// like SSE, whose clients reconnect); false to let it run until the drain deadline.
    virtual bool end_on_stop() noexcept { return false; }
};

/// The protocol a connection carries after a `101 Switching Protocols` response (WebSocket).
/// A body source whose bytes are already framed by the protocol (the transport sends them as
/// they are) and which also takes every byte the transport reads. `pull` returning `ended`
/// closes the connection once the bytes are written; `aborted` closes it at once.
class upgraded_protocol : public body_source {
public:
    /// Loop: bytes read from the peer, in order. False when the protocol takes no more
    /// input (it is closing): the transport stops reading. After it returns the transport
    /// pulls (at once, or when the write in progress completes), so what `receive` queued
    /// needs no wake-up.
    virtual bool receive(std::string_view bytes) = 0;
    /// Loop: the server has begun to stop (its grace period, or the stop itself when it has
    /// none): a protocol that can warn its peer first does so (HTTP/2's GOAWAY shutdown
    /// notice). True when it queued something: the transport pulls. The stop itself still
    /// comes through `end_on_stop`.
    virtual bool on_closing() noexcept { return false; }
};

/// Why the reading of a streamed request body ended before its end: the values of the public
/// tern::body_failure (src/handling checks that they agree), which this layer cannot see.
enum class body_stop : int { client_left = 1, too_large, idle, stopped };

/// Told, on the loop, what a streamed request body brings (tern::streamed_body): one call
/// per `body_port::ask`. Implemented by src/handling's body channel.
class body_sink {
public:
    virtual ~body_sink() = default;
    /// The next piece of the body; it stays valid until the next `ask`.
    virtual void on_piece(std::string_view piece) = 0;
    /// The body is complete; `trailers` (valid during the call) are its trailer fields.
    virtual void on_end(std::span<const header_field> trailers, std::string_view storage) = 0;
    /// The reading ended before the body's end.
    virtual void on_failure(body_stop reason) = 0;
};

/// The transport's side of a streamed request body: nothing of it is read until asked.
/// Loop thread only.
class body_port {
public:
    /// `sink` wants the next piece (or the end, or the failure): told once, later, on the
    /// loop (never inside this call).
    virtual void ask(std::shared_ptr<body_sink> sink) = 0;

protected:
    ~body_port() = default;
};

/// One request's way back to its transport, given to the application with the request
/// (the HTTP/1 connection now; an HTTP/2 stream later). Loop thread only.
class exchange_port {
public:
    /// The door of the loop this request lives on.
    virtual std::shared_ptr<loop_door> door() = 0;
    /// During the handler chain: the response is completed later (`finish`). Until then the
    /// transport answers nothing more on this connection, and `link` is told if the request
    /// can no longer be answered.
    virtual void hold(std::shared_ptr<held_link> link) = 0;
    /// The held request's response is complete: the transport sends it (a response with a
    /// `source` is streamed) and goes on with the next request.
    virtual void finish(response&& res) = 0;
    /// The streamed body's source has bytes (or ended) after a pull found none.
    virtual void wake() = 0;

protected:
    ~exchange_port() = default;
};

}  // namespace tern::detail

#pragma once
/// @file sse.hpp
/// Server-Sent Events (`app::sse`): a client handle and a thread-safe set for broadcasts.

#include <tern/export.hpp>
#include <tern/handler.hpp>
#include <tern/stream.hpp>

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace tern {

/// One connected EventSource (an `app::sse` route), usable from any thread. Copies refer to
/// the same client; the stream stays open while a copy exists and ends (cleanly: the browser
/// reconnects after its retry time) when the last one is gone or `close()` is called. A
/// comment is sent when the stream has been silent for `streams_config::sse_keep_alive`, so proxies
/// keep it open and a client that left is noticed. The backpressure rules of
/// `response_stream` apply: a client that stops reading is cut off at
/// `streams_config::max_buffer`.
class TERN_API sse_client {
public:
    /// An empty handle.
    sse_client() noexcept = default;

    /// Sends one event: `data` (each line, split at CR, LF or CRLF, becomes a `data:` line,
    /// so multi-line text arrives whole), with an `event:` type and an `id:` when not empty.
    /// Throws std::invalid_argument for a CR or LF in `event` or `id`, or a NUL in `id`.
    /// Returns what `response_stream::write` returns: false over the buffer mark, or once
    /// the client is gone.
    bool send(std::string_view data, std::string_view event = {}, std::string_view id = {}) const;
    /// Sends a comment line (`: text`), which EventSource ignores.
    bool comment(std::string_view text) const;
    /// Tells the browser how long to wait before reconnecting (`retry:`).
    bool retry(std::chrono::milliseconds delay) const;
    /// The `Last-Event-ID` the browser sent when it reconnected; empty on a first connect.
    const std::string& last_event_id() const noexcept;
    /// True once the client is gone or the stream was closed.
    bool closed() const noexcept;
    /// Runs `fn` once when the stream is over (see `response_stream::on_close`).
    void on_close(std::function<void()> fn) const;
    /// Ends the stream: what was sent goes out, then the response ends.
    void close() const;
    /// The underlying stream (for `on_writable`, or raw writes).
    const response_stream& stream() const noexcept { return stream_; }
    /// Whether this handle refers to a client.
    explicit operator bool() const noexcept { return static_cast<bool>(stream_); }

    /// Built by `app::sse`.
    sse_client(response_stream stream, std::string last_event_id);

private:
    friend class sse_clients;
    response_stream stream_;
    std::shared_ptr<const std::string> last_event_id_;
};

/// A set of SSE clients that any thread may add to and broadcast to. Clients that are gone
/// are dropped from it as broadcasts find them.
class TERN_API sse_clients {
public:
    /// Adds `client` (an empty or closed one is ignored).
    void add(sse_client client);
    /// Sends one event (as `sse_client::send`) to every client; returns how many it was
    /// queued for. The event is formatted once.
    std::size_t broadcast(std::string_view data, std::string_view event = {},
                          std::string_view id = {});
    /// Clients in the set (some may have left since the last broadcast).
    std::size_t size() const;
    /// Ends every client's stream and empties the set.
    void close_all();

private:
    mutable std::mutex mutex_;
    std::vector<sse_client> clients_;
};

/// The handler of an `app::sse` route: called once per connecting client with the
/// request's context (valid during the call only: path parameters, headers, cookies) and the
/// client, which it keeps (e.g. in an `sse_clients` set) for as long as it sends events.
using sse_handler = std::function<void(context&, sse_client)>;

}  // namespace tern

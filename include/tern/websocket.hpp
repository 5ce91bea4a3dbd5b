#pragma once
/// @file websocket.hpp
/// WebSocket endpoints (`app::ws`, RFC 6455): the route's handlers, a connection handle
/// usable from any thread, and a thread-safe set of connections for broadcasts.

#include <tern/export.hpp>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tern {

namespace detail {
class ws_connection;
}  // namespace detail

/// One WebSocket connection. Copies refer to the same connection; every member may be
/// called from any thread. A handle kept after the connection closed is harmless: sends
/// return false and do nothing. The connection stays open while the peer keeps it open,
/// whether or not a handle exists.
///
/// Backpressure is that of `response_stream`: `send` returns false once
/// `streams_config::buffer_size` bytes wait for the peer (wait for `on_writable`), and a
/// connection whose queue would pass `streams_config::max_buffer` is closed, so a peer that
/// stops reading never makes the server hold more than that.
class TERN_API ws_connection {
public:
    /// An empty handle.
    ws_connection() noexcept = default;

    /// Queues a text message. Throws std::invalid_argument when `text` is not UTF-8 (RFC
    /// 6455 5.6). True while the queue is below `streams_config::buffer_size`; false at or
    /// above it (the message was queued: wait for `on_writable`), or when the connection is
    /// closing or closed (nothing was queued).
    bool send(std::string_view text) const;
    /// Queues a binary message; returns as `send`.
    bool send_binary(std::string_view data) const;
    /// Starts the closing handshake with `code` (1000 normal closure, 1001 going away, or an
    /// application code 3000-4999; see docs/websocket.md) and `reason` (UTF-8, cut to 123
    /// bytes). Messages queued before still go out; the peer's answer (or 5 s without one)
    /// ends the connection. Throws std::invalid_argument for a code an endpoint may not send.
    void close(int code = 1000, std::string_view reason = {}) const;
    /// True until the closing handshake started or the connection ended.
    bool is_open() const noexcept;
    /// Runs `fn` once, on the connection's event loop, when the queue has drained below
    /// `streams_config::buffer_size` after a `send` returned false.
    void on_writable(std::function<void()> fn) const;

    /// A path parameter of the route (`/chat/{room}`), percent-decoded; empty when absent.
    std::string_view path_param(std::string_view name) const noexcept;
    /// A field of the upgrade request (case-insensitive name), or nullopt.
    std::optional<std::string_view> header(std::string_view name) const noexcept;
    /// A query parameter of the upgrade request, decoded, or nullopt.
    std::optional<std::string> query_param(std::string_view name) const;
    /// A cookie of the upgrade request, or nullopt.
    std::optional<std::string_view> cookie(std::string_view name) const;
    /// The path of the upgrade request.
    std::string_view path() const noexcept;
    /// The client's address, as `context::ip()` gave it for the upgrade request (behind a
    /// trusted proxy, the client the proxy names; see `app::trusted_proxies`).
    std::string_view remote_ip() const noexcept;
    /// The subprotocol chosen in the handshake; empty when none.
    std::string_view subprotocol() const noexcept;
    /// A number unique to this connection within the process.
    std::uint64_t id() const noexcept;

    /// Whether this handle refers to a connection.
    explicit operator bool() const noexcept { return static_cast<bool>(connection_); }
    /// Handles of the same connection compare equal.
    friend bool operator==(const ws_connection& a, const ws_connection& b) noexcept {
        return a.connection_ == b.connection_;
    }

    /// Built by tern for each connection.
    explicit ws_connection(std::shared_ptr<detail::ws_connection> connection) noexcept
        : connection_(std::move(connection)) {}

private:
    friend class ws_clients;
    std::shared_ptr<detail::ws_connection> connection_;
};

/// What an `app::ws` route does, filled by the function given to `app::ws`. Every callback
/// runs on the connection's event loop thread, one at a time per connection: keep them
/// short, as handlers (hand long work to another thread and `send` from there). A callback
/// that throws closes the connection with 1011 (after `on_error`).
class TERN_API ws_handlers {
public:
    /// The handshake succeeded (the 101 is on its way); messages may be sent.
    ws_handlers& on_connect(std::function<void(ws_connection&)> fn);
    /// A complete text message (valid UTF-8; fragments joined, decompressed).
    ws_handlers& on_message(std::function<void(ws_connection&, std::string_view text)> fn);
    /// A complete binary message.
    ws_handlers& on_binary(std::function<void(ws_connection&, std::string_view data)> fn);
    /// The connection ended, once: `code` and `reason` from the closing handshake (1005 when
    /// the close frame had no code), or 1006 when the connection ended without one (the
    /// peer vanished, a deadline passed, the server stopped past its drain time).
    ws_handlers& on_close(
        std::function<void(ws_connection&, int code, std::string_view reason)> fn);
    /// tern is failing the connection: the peer broke the protocol (1002), sent text that
    /// is not UTF-8 (1007), passed a size limit (1009), or a callback threw (1011). `code` is
    /// the close code sent, `what` a description. `on_close` follows.
    ws_handlers& on_error(std::function<void(ws_connection&, int code, std::string_view what)> fn);
    /// Subprotocols this route speaks (Sec-WebSocket-Protocol). The first one the client
    /// lists that is also here is chosen; none in common: the handshake succeeds without one.
    ws_handlers& subprotocols(std::vector<std::string> names);
    /// Origins allowed to connect (e.g. "https://example.com"): a browser's handshake from
    /// any other origin gets 403 (cross-site WebSocket hijacking). An upgrade without an
    /// Origin field (not from a browser) is allowed. Empty (the default): every origin.
    ws_handlers& allowed_origins(std::vector<std::string> origins);

    /// The callbacks and settings, for tern.
    struct parts {
        std::function<void(ws_connection&)> connect;                       ///< on_connect
        std::function<void(ws_connection&, std::string_view)> message;     ///< on_message
        std::function<void(ws_connection&, std::string_view)> binary;      ///< on_binary
        std::function<void(ws_connection&, int, std::string_view)> close;  ///< on_close
        std::function<void(ws_connection&, int, std::string_view)> error;  ///< on_error
        std::vector<std::string> subprotocols;                             ///< subprotocols
        std::vector<std::string> origins;                                  ///< allowed_origins
    };
    /// What was set.
    const parts& get() const noexcept { return parts_; }

private:
    parts parts_;
};

/// The function given to `app::ws`: fills the route's handlers once, at registration.
using ws_setup = std::function<void(ws_handlers&)>;

/// A set of WebSocket connections that any thread may add to and broadcast to (a chat room,
/// a topic). Connections that closed are dropped from it as broadcasts find them.
class TERN_API ws_clients {
public:
    /// Adds `c` (an empty handle, or one already in the set, is ignored).
    void add(const ws_connection& c);
    /// Removes `c`.
    void remove(const ws_connection& c);
    /// Sends a text message to every open connection (framed once for all that do not
    /// compress); returns how many it was queued for. Throws std::invalid_argument when
    /// `text` is not UTF-8.
    std::size_t broadcast(std::string_view text);
    /// Sends a binary message to every open connection; returns how many it was queued for.
    std::size_t broadcast_binary(std::string_view data);
    /// Connections in the set (some may have closed since the last broadcast).
    std::size_t size() const;
    /// Closes every connection with `code` and empties the set.
    void close_all(int code = 1001, std::string_view reason = {});

private:
    std::size_t send_all(std::string_view payload, bool text);

    mutable std::mutex mutex_;
    std::vector<ws_connection> clients_;
};

}  // namespace tern

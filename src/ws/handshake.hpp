#pragma once
// RFC 6455 section 4.2: the server's side of the opening handshake. Checks an upgrade
// request, chooses the subprotocol and the permessage-deflate parameters, and gives the
// fields of the 101 answer (or the refusal's status). Transport-free; the SHA-1 and base64
// of Sec-WebSocket-Accept come from OpenSSL.

#include "http/request.hpp"
#include "ws/deflate.hpp"

#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace tern::detail::ws {

/// What the server accepts, set by the application for one route.
struct handshake_policy {
    /// Subprotocols the route speaks. The first one the client lists (in the client's order)
    /// that is also here is chosen; none in common, or none offered: no subprotocol.
    std::span<const std::string> subprotocols;
    /// Offer permessage-deflate when the client asks for it.
    bool compression = false;
    /// When compressing: reset the server's compressor after every message (less memory
    /// kept per connection, worse ratio) and say so (server_no_context_takeover).
    bool server_no_context_takeover = false;
};

/// The outcome of `check_upgrade`.
struct handshake_result {
    /// 101 when the upgrade is accepted. Else the refusal: 400 for a malformed upgrade
    /// request, 426 for a request that is not a WebSocket upgrade at all or asks for a
    /// version other than 13 or names none (the answer then carries
    /// `Sec-WebSocket-Version: 13`, RFC 6455 4.2.2, and `Upgrade: websocket`, which RFC 9110
    /// 15.5.22 requires of every 426), 405 for a method other than GET (checked first; the
    /// answer carries `Allow: GET`).
    int status = 400;
    std::string why;          ///< a short reason for a refusal (the error body, the log)
    std::string accept;       ///< Sec-WebSocket-Accept
    std::string subprotocol;  ///< chosen Sec-WebSocket-Protocol, or empty
    std::optional<deflate_params> deflate;  ///< negotiated permessage-deflate, if any
};

/// Checks `req` as a WebSocket opening handshake (RFC 6455 4.2.1): GET, HTTP/1.1 or later,
/// a Host field, `Upgrade` with the token `websocket`, `Connection` with the token `Upgrade`
/// (both case-insensitive, in comma lists), exactly one `Sec-WebSocket-Key` that is base64
/// of 16 bytes, `Sec-WebSocket-Version: 13`, and no request body. Several
/// Sec-WebSocket-Protocol and Sec-WebSocket-Extensions fields are read as one list each.
handshake_result check_upgrade(const request& req, const handshake_policy& policy);

/// True when `req` asks for a WebSocket upgrade at all (an `Upgrade` field with the token
/// `websocket`), well-formed or not.
bool wants_websocket(const request& req) noexcept;

/// base64(SHA-1(key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11")) (RFC 6455 4.2.2, step 5.4).
std::string accept_key(std::string_view key);

}  // namespace tern::detail::ws

#pragma once
// The client's half of the WebSocket opening handshake (RFC 6455 section 4.1): the key it
// sends and the Sec-WebSocket-Accept it expects back. SHA-1 and base64 are OpenSSL's
// (libcrypto).

#include <string>
#include <string_view>

namespace tern::testing::detail {

/// `bytes` in base64 (RFC 4648 section 4, with padding).
std::string base64(std::string_view bytes);

/// The Sec-WebSocket-Accept a server answers to `key` (section 4.2.2): the base64 of the SHA-1
/// of the key followed by the GUID 258EAFA5-E914-47DA-95CA-C5AB0DC85B11.
std::string websocket_accept(std::string_view key);

}  // namespace tern::testing::detail

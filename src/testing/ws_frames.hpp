#pragma once
// WebSocket frames as a client sends and reads them (RFC 6455 section 5), transport-free:
// strings in, strings out. ws_client puts them on the socket.

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace tern::testing::detail {

/// The opcodes of RFC 6455 section 5.2.
namespace ws_opcode {
inline constexpr std::uint8_t continuation = 0x0;
inline constexpr std::uint8_t text = 0x1;
inline constexpr std::uint8_t binary = 0x2;
inline constexpr std::uint8_t close = 0x8;
inline constexpr std::uint8_t ping = 0x9;
inline constexpr std::uint8_t pong = 0xA;
}  // namespace ws_opcode

/// A masking key (section 5.3).
using ws_mask = std::array<std::uint8_t, 4>;

/// Appends one client frame to `out`: FIN when `fin`, `opcode`, the mask bit and `mask`, the
/// payload length in the shortest of the 7-, 16- and 64-bit forms, the payload masked.
void append_client_frame(std::string& out, std::uint8_t opcode, bool fin, std::string_view payload,
                         const ws_mask& mask);

/// One frame as the server sent it.
struct ws_frame {
    bool fin = true;
    std::uint8_t opcode = 0;
    std::string payload;
};

/// Decodes the server frame at the start of `bytes`: the frame, with `used` set to the bytes
/// it took, or std::nullopt while it is incomplete. Throws client_error for what a client
/// must refuse (sections 5.1 to 5.5): a masked frame, a reserved bit (no extension is
/// negotiated), an unknown opcode, a control frame that is fragmented or over 125 bytes, a
/// length not in its shortest form or with the top bit set, or one over `max_payload` (as
/// soon as the length is read).
std::optional<ws_frame> parse_server_frame(std::string_view bytes, std::size_t& used,
                                           std::size_t max_payload);

/// The payload of a Close frame: `code` in two bytes (network order), then `reason`.
std::string close_payload(int code, std::string_view reason);

/// A Close frame's code and reason.
struct ws_close {
    int code = 1005;  ///< 1005 when the payload was empty
    std::string reason;
};

/// Decodes a server's Close payload (section 5.5.1): 1005 when empty. Throws client_error for
/// a one-byte payload, a code no endpoint may send, or a reason that is not UTF-8.
ws_close parse_close_payload(std::string_view payload);

/// True for the close codes an endpoint may send (sections 7.4.1 and 7.4.2, with the codes
/// IANA registered since): 1000-1003, 1007-1014 and 3000-4999.
bool sendable_close_code(int code) noexcept;

/// True when `text` is UTF-8 as RFC 3629 defines it: no overlong forms, no surrogates, no
/// code point past U+10FFFF, no truncated sequence.
bool valid_utf8(std::string_view text) noexcept;

}  // namespace tern::testing::detail

#pragma once
// RFC 6455 section 5: the WebSocket frame format. The parser reads frames a client sends
// (masked, section 5.3) incrementally from whatever the transport read, checks every rule
// of section 5 a single frame can break, and unmasks the payload into the caller's buffer;
// the writer appends the frames a server sends (unmasked). Transport-free: bytes in, events
// out. Message-level rules (fragment order, UTF-8, sizes of whole messages) are the
// connection's (handling/ws_connection).

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace tern::detail::ws {

/// Frame opcodes (RFC 6455 5.2).
enum class opcode : std::uint8_t {
    continuation = 0x0,
    text = 0x1,
    binary = 0x2,
    close = 0x8,
    ping = 0x9,
    pong = 0xA,
};

/// True for close, ping and pong (RFC 6455 5.5).
constexpr bool is_control(opcode op) noexcept { return (static_cast<std::uint8_t>(op) & 0x8) != 0; }

/// Close codes tern sends (RFC 6455 7.4.1).
namespace close_code {
inline constexpr std::uint16_t normal = 1000;
inline constexpr std::uint16_t going_away = 1001;
inline constexpr std::uint16_t protocol_error = 1002;
inline constexpr std::uint16_t unsupported_data = 1003;
inline constexpr std::uint16_t no_status = 1005;  ///< never sent: a close frame without a code
inline constexpr std::uint16_t abnormal = 1006;   ///< never sent: the TCP connection ended
inline constexpr std::uint16_t invalid_payload = 1007;
inline constexpr std::uint16_t policy_violation = 1008;
inline constexpr std::uint16_t too_big = 1009;
inline constexpr std::uint16_t internal_error = 1011;
}  // namespace close_code

/// The header of one frame as received.
struct frame_header {
    bool fin = false;
    bool rsv1 = false;  ///< "compressed" on the first frame of a permessage-deflate message
    opcode op = opcode::continuation;
    std::uint64_t length = 0;  ///< payload length
};

/// Reads client frames incrementally. Usage: call `feed` with the bytes read; it consumes
/// what it can and stops at each event:
///   - `frame_start`: a header is complete and valid (`header()`); the payload follows.
///     The caller may refuse it (e.g. a message limit) by not feeding further.
///   - `frame_end`: the whole payload has been delivered: a data frame's (continuation,
///     text, binary) was appended, unmasked, to the `data` string passed to `feed`, in
///     pieces as it arrived; a control frame's is in `control_payload()`.
///   - `need_more`: every byte given was consumed and no event is complete.
///   - `error`: the frame breaks RFC 6455 section 5; `error_code()` is the close code to
///     send (1002, or 1009 for a frame over `max_payload`) and `error_reason()` says why.
///     The parser stays in error: the connection is to be failed.
/// A frame whose payload is empty gives `frame_start` then `frame_end`.
class frame_parser {
public:
    enum class event { need_more, frame_start, frame_end, error };
    struct result {
        std::size_t consumed = 0;  ///< bytes of the input used up to this event
        event what = event::need_more;
    };

    /// `max_payload`: the largest payload a data frame may announce (a larger one is an
    /// error with code 1009 as soon as its length is read). `rsv1_allowed`: permessage-
    /// deflate was negotiated, so RSV1 may be set on a first data frame (section 5.2 and
    /// RFC 7692 6); whether it is set on the right frame is the connection's check.
    frame_parser(std::uint64_t max_payload, bool rsv1_allowed) noexcept;

    /// Consumes bytes of `in` up to the next event. Data payload bytes are appended to
    /// `data`. Never throws except std::bad_alloc (from appending to `data`).
    result feed(std::string_view in, std::string& data);

    /// The header of the frame in progress (valid from `frame_start` to the next feed after
    /// `frame_end`).
    const frame_header& header() const noexcept { return header_; }
    /// A control frame's payload (at most 125 bytes), valid after its `frame_end`.
    std::string_view control_payload() const noexcept { return {control_.data(), control_size_}; }
    std::uint16_t error_code() const noexcept { return error_code_; }
    const char* error_reason() const noexcept { return error_reason_; }

private:
    // implementation state: header bytes gathered so far, mask, payload bytes left, ...
    enum class state { header, payload, frame_done, failed };
    result fail(std::size_t consumed, std::uint16_t code, const char* reason) noexcept;
    // The first two header bytes into header_; null, or why the frame breaks RFC 6455 5.2.
    const char* read_first_bytes() noexcept;
    // The extended length of `ext` bytes (0, 2 or 8) into header_; null, or why it is refused.
    const char* read_length(std::size_t ext) noexcept;
    // Unmasks what `in` holds of the payload from `pos` into `data` (or the control buffer).
    result take_payload(std::string_view in, std::size_t pos, std::string& data);

    std::uint64_t max_payload_;
    bool rsv1_allowed_;
    state state_ = state::header;
    std::array<std::uint8_t, 14> head_{};  // up to 2 + 8 + 4 bytes of header
    std::size_t head_size_ = 0;
    std::array<std::uint8_t, 4> mask_{};
    std::uint64_t payload_done_ = 0;  // payload bytes delivered (also the mask offset)
    frame_header header_;
    std::array<char, 125> control_{};
    std::size_t control_size_ = 0;
    std::uint16_t error_code_ = 0;
    const char* error_reason_ = "";
};

/// Appends one server frame (unmasked) to `out`: FIN, RSV1 as given, the opcode, the
/// shortest length encoding, and the payload.
void append_frame(std::string& out, opcode op, std::string_view payload, bool fin = true,
                  bool rsv1 = false);

/// Appends a close frame: `code` (omitted when it is close_code::no_status, giving an empty
/// payload, and then no reason either) and `reason`, cut to fit the 125-byte control payload
/// (123 bytes of reason) at a UTF-8 boundary. A reason that is not UTF-8 is left out, since
/// the peer would fail the connection on it (RFC 6455 8.1).
void append_close_frame(std::string& out, std::uint16_t code, std::string_view reason);

/// What a received close frame's payload says (RFC 6455 5.5.1, 7.1.5, 7.4).
struct close_payload {
    std::uint16_t code = close_code::no_status;  ///< no_status when the payload is empty
    std::string_view reason;                     ///< views the payload given to parse_close_payload
    std::uint16_t error = 0;  ///< 0 when valid; else the close code to answer with (1002 for
                              ///< a 1-byte payload or a code that may not be sent, 1007 for a
                              ///< reason that is not UTF-8)
};
close_payload parse_close_payload(std::string_view payload) noexcept;

/// True for the codes a peer may send in a close frame (RFC 6455 7.4.1 and 7.4.2: 1000-1003,
/// 1007-1011 (and the registered 1012-1014), 3000-4999).
bool is_valid_close_code(std::uint16_t code) noexcept;

}  // namespace tern::detail::ws

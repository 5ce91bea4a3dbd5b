#include "testing/ws_frames.hpp"

#include <tern/testing.hpp>

namespace tern::testing::detail {

namespace {

bool known_opcode(std::uint8_t opcode) noexcept {
    return opcode <= ws_opcode::binary || (opcode >= ws_opcode::close && opcode <= ws_opcode::pong);
}

}  // namespace

void append_client_frame(std::string& out, std::uint8_t opcode, bool fin, std::string_view payload,
                         const ws_mask& mask) {
    out.push_back(static_cast<char>((fin ? 0x80 : 0x00) | opcode));
    const std::uint64_t size = payload.size();
    if (size < 126) {
        out.push_back(static_cast<char>(0x80 | size));
    } else if (size <= 0xFFFF) {
        out.push_back(static_cast<char>(0x80 | 126));
        out.push_back(static_cast<char>(size >> 8));
        out.push_back(static_cast<char>(size & 0xFF));
    } else {
        out.push_back(static_cast<char>(0x80 | 127));
        for (int shift = 56; shift >= 0; shift -= 8) {
            out.push_back(static_cast<char>((size >> shift) & 0xFF));
        }
    }
    for (const std::uint8_t b : mask) out.push_back(static_cast<char>(b));
    const std::size_t start = out.size();
    out.append(payload);
    for (std::size_t i = 0; i < payload.size(); ++i) {
        out[start + i] = static_cast<char>(static_cast<std::uint8_t>(out[start + i]) ^ mask[i % 4]);
    }
}

std::optional<ws_frame> parse_server_frame(std::string_view bytes, std::size_t& used,
                                           std::size_t max_payload) {
    if (bytes.size() < 2) return std::nullopt;
    const auto first = static_cast<std::uint8_t>(bytes[0]);
    const auto second = static_cast<std::uint8_t>(bytes[1]);
    ws_frame frame;
    frame.fin = (first & 0x80) != 0;
    frame.opcode = first & 0x0F;
    // Section 5.2: RSV1-3 must be 0 unless an extension defines them; none is negotiated.
    if ((first & 0x70) != 0) throw client_error("a WebSocket frame with a reserved bit set");
    if (!known_opcode(frame.opcode)) {
        throw client_error("a WebSocket frame with the unknown opcode " +
                           std::to_string(frame.opcode));
    }
    // Section 5.1: a client closes the connection on a masked frame from the server.
    if ((second & 0x80) != 0) throw client_error("a masked WebSocket frame from the server");
    std::uint64_t size = second & 0x7F;
    std::size_t header = 2;
    if (size == 126) {
        if (bytes.size() < 4) return std::nullopt;
        size = (static_cast<std::uint64_t>(static_cast<std::uint8_t>(bytes[2])) << 8) |
               static_cast<std::uint8_t>(bytes[3]);
        header = 4;
        if (size < 126) throw client_error("a WebSocket frame length not in its shortest form");
    } else if (size == 127) {
        if (bytes.size() < 10) return std::nullopt;
        size = 0;
        for (std::size_t i = 2; i < 10; ++i)
            size = (size << 8) | static_cast<std::uint8_t>(bytes[i]);
        header = 10;
        if ((size >> 63) != 0) throw client_error("a WebSocket frame length with the top bit set");
        if (size <= 0xFFFF) throw client_error("a WebSocket frame length not in its shortest form");
    }
    // Section 5.5: control frames are at most 125 bytes and never fragmented.
    if (frame.opcode >= ws_opcode::close) {
        if (size > 125) throw client_error("a WebSocket control frame over 125 bytes");
        if (!frame.fin) throw client_error("a fragmented WebSocket control frame");
    }
    if (size > max_payload) {
        throw client_error("a WebSocket frame of " + std::to_string(size) +
                           " bytes, over the client's limit of " + std::to_string(max_payload));
    }
    if (bytes.size() - header < size) return std::nullopt;
    frame.payload.assign(bytes.substr(header, static_cast<std::size_t>(size)));
    used = header + static_cast<std::size_t>(size);
    return frame;
}

std::string close_payload(int code, std::string_view reason) {
    std::string out;
    out.push_back(static_cast<char>((code >> 8) & 0xFF));
    out.push_back(static_cast<char>(code & 0xFF));
    out.append(reason);
    return out;
}

ws_close parse_close_payload(std::string_view payload) {
    ws_close out;
    if (payload.empty()) return out;
    if (payload.size() == 1) throw client_error("a WebSocket Close frame with a one-byte payload");
    out.code = (static_cast<std::uint8_t>(payload[0]) << 8) | static_cast<std::uint8_t>(payload[1]);
    if (!sendable_close_code(out.code)) {
        throw client_error("a WebSocket Close frame with the code " + std::to_string(out.code) +
                           ", which no endpoint may send");
    }
    payload.remove_prefix(2);
    if (!valid_utf8(payload)) throw client_error("a WebSocket close reason that is not UTF-8");
    out.reason.assign(payload);
    return out;
}

bool sendable_close_code(int code) noexcept {
    return (code >= 1000 && code <= 1003) || (code >= 1007 && code <= 1014) ||
           (code >= 3000 && code <= 4999);
}

bool valid_utf8(std::string_view text) noexcept {
    std::size_t i = 0;
    while (i < text.size()) {
        const auto c = static_cast<std::uint8_t>(text[i]);
        if (c < 0x80) {
            ++i;
            continue;
        }
        // The lead byte gives the length and the range the second byte must be in (RFC 3629
        // section 4), which rules out overlong forms, surrogates and code points past U+10FFFF.
        std::size_t length = 0;
        std::uint8_t low = 0x80;
        std::uint8_t high = 0xBF;
        if (c >= 0xC2 && c <= 0xDF) {
            length = 2;
        } else if (c >= 0xE0 && c <= 0xEF) {
            length = 3;
            if (c == 0xE0) low = 0xA0;
            if (c == 0xED) high = 0x9F;
        } else if (c >= 0xF0 && c <= 0xF4) {
            length = 4;
            if (c == 0xF0) low = 0x90;
            if (c == 0xF4) high = 0x8F;
        } else {
            return false;
        }
        if (text.size() - i < length) return false;
        const auto second = static_cast<std::uint8_t>(text[i + 1]);
        if (second < low || second > high) return false;
        for (std::size_t k = 2; k < length; ++k) {
            const auto next = static_cast<std::uint8_t>(text[i + k]);
            if (next < 0x80 || next > 0xBF) return false;
        }
        i += length;
    }
    return true;
}

}  // namespace tern::testing::detail

#include "ws/frame.hpp"

#include "ws/utf8.hpp"

#include <algorithm>
#include <cstring>

namespace tern::detail::ws {

namespace {

constexpr std::uint8_t fin_bit = 0x80;
constexpr std::uint8_t rsv1_bit = 0x40;
constexpr std::uint8_t rsv2_bit = 0x20;
constexpr std::uint8_t rsv3_bit = 0x10;
constexpr std::uint8_t opcode_bits = 0x0F;
constexpr std::uint8_t mask_bit = 0x80;
constexpr std::uint8_t length_bits = 0x7F;
constexpr std::size_t max_control_payload = 125;  // RFC 6455 5.5
constexpr std::size_t max_close_reason = max_control_payload - 2;

bool known_opcode(std::uint8_t op) noexcept { return op <= 0x2 || (op >= 0x8 && op <= 0xA); }

// XORs `n` bytes of `src` with the 4-byte `mask` into `dst` (which may be `src`), as if the
// first byte were at payload offset `offset` (RFC 6455 5.3: byte i uses mask[i % 4]). Eight
// bytes at a time through a 64-bit key; memcpy keeps the loads and stores free of alignment
// and aliasing assumptions, and compilers turn the loop into vector code.
void unmask(char* dst, const char* src, std::size_t n, const std::array<std::uint8_t, 4>& mask,
            std::uint64_t offset) noexcept {
    std::array<std::uint8_t, 8> key{};
    for (std::size_t k = 0; k < key.size(); ++k) key[k] = mask[(offset + k) & 3];
    std::uint64_t key64 = 0;
    std::memcpy(&key64, key.data(), sizeof key64);
    std::size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        std::uint64_t word = 0;
        std::memcpy(&word, src + i, sizeof word);
        word ^= key64;
        std::memcpy(dst + i, &word, sizeof word);
    }
    for (; i < n; ++i) dst[i] = static_cast<char>(static_cast<std::uint8_t>(src[i]) ^ key[i & 7]);
}

}  // namespace

frame_parser::frame_parser(std::uint64_t max_payload, bool rsv1_allowed) noexcept
    : max_payload_(max_payload), rsv1_allowed_(rsv1_allowed) {}

frame_parser::result frame_parser::fail(std::size_t consumed, std::uint16_t code,
                                        const char* reason) noexcept {
    state_ = state::failed;
    error_code_ = code;
    error_reason_ = reason;
    return {consumed, event::error};
}

const char* frame_parser::read_first_bytes() noexcept {
    // RFC 6455 5.2: the rules one frame's first two bytes can break, checked as soon as those
    // bytes are here.
    const std::uint8_t b0 = head_[0];
    const std::uint8_t b1 = head_[1];
    const auto op = static_cast<std::uint8_t>(b0 & opcode_bits);
    if ((b0 & (rsv2_bit | rsv3_bit)) != 0) return "RSV2 or RSV3 set";
    if (!known_opcode(op)) return "unknown opcode";
    header_.fin = (b0 & fin_bit) != 0;
    header_.rsv1 = (b0 & rsv1_bit) != 0;
    header_.op = static_cast<opcode>(op);
    if (is_control(header_.op)) {
        // RFC 6455 5.5: control frames are not fragmented and carry at most 125 bytes;
        // RFC 7692 6.1: permessage-deflate never sets RSV1 on them.
        if (!header_.fin) return "fragmented control frame";
        if ((b1 & length_bits) > max_control_payload) return "control frame over 125 bytes";
        if (header_.rsv1) return "RSV1 on a control frame";
    }
    if (header_.rsv1 && !rsv1_allowed_) return "RSV1 set without an extension";
    // RFC 7692 6.1: only the first frame of a message says "compressed".
    if (header_.rsv1 && header_.op == opcode::continuation) return "RSV1 on a continuation frame";
    // RFC 6455 5.1: a server closes the connection on an unmasked client frame.
    if ((b1 & mask_bit) == 0) return "unmasked client frame";
    return nullptr;
}

const char* frame_parser::read_length(std::size_t ext) noexcept {
    std::uint64_t length = head_[1] & length_bits;
    if (ext != 0) {
        length = 0;
        for (std::size_t i = 0; i < ext; ++i) length = (length << 8) | head_[2 + i];
        // RFC 6455 5.2: the most significant bit of the 64-bit length is 0, and "the minimal
        // number of bytes MUST be used to encode the length".
        if (ext == 8 && (length >> 63) != 0) return "64-bit length with its top bit set";
        if ((ext == 2 && length < 126) || (ext == 8 && length <= 0xFFFF)) {
            return "length not minimally encoded";
        }
    }
    header_.length = length;
    return nullptr;
}

frame_parser::result frame_parser::feed(std::string_view in, std::string& data) {
    std::size_t pos = 0;
    // Copies header bytes until head_ holds `want` of them; false when `in` ran out first.
    const auto gather = [&](std::size_t want) {
        const std::size_t take = std::min(want - std::min(want, head_size_), in.size() - pos);
        // std::copy_n, not memcpy: an empty view's data() may be null, which memcpy may not take.
        std::copy_n(in.data() + pos, take, head_.data() + head_size_);
        head_size_ += take;
        pos += take;
        return head_size_ >= want;
    };

    switch (state_) {
        case state::failed:
            return {0, event::error};
        case state::frame_done:
            head_size_ = 0;
            state_ = state::header;
            [[fallthrough]];
        case state::header: {
            if (!gather(2)) return {pos, event::need_more};
            if (const char* why = read_first_bytes()) {
                return fail(pos, close_code::protocol_error, why);
            }
            const auto len7 = static_cast<std::uint8_t>(head_[1] & length_bits);
            const std::size_t ext = len7 == 126 ? 2 : len7 == 127 ? 8 : 0;
            if (!gather(2 + ext)) return {pos, event::need_more};
            if (const char* why = read_length(ext)) {
                return fail(pos, close_code::protocol_error, why);
            }
            if (!is_control(header_.op) && header_.length > max_payload_) {
                return fail(pos, close_code::too_big, "frame payload over the limit");
            }
            if (!gather(2 + ext + 4)) return {pos, event::need_more};
            std::memcpy(mask_.data(), head_.data() + 2 + ext, mask_.size());
            payload_done_ = 0;
            control_size_ = 0;
            state_ = state::payload;
            return {pos, event::frame_start};
        }
        case state::payload:
            break;
    }
    return take_payload(in, pos, data);
}

frame_parser::result frame_parser::take_payload(std::string_view in, std::size_t pos,
                                                std::string& data) {
    const std::uint64_t left = header_.length - payload_done_;
    const auto take = static_cast<std::size_t>(std::min<std::uint64_t>(left, in.size() - pos));
    if (take != 0) {
        char* dst = nullptr;
        if (is_control(header_.op)) {
            dst = control_.data() + control_size_;
            control_size_ += take;
        } else {
            const std::size_t old = data.size();
            data.resize(old + take);
            dst = data.data() + old;
        }
        unmask(dst, in.data() + pos, take, mask_, payload_done_);
        pos += take;
        payload_done_ += take;
    }
    if (payload_done_ == header_.length) {
        state_ = state::frame_done;
        return {pos, event::frame_end};
    }
    return {pos, event::need_more};
}

void append_frame(std::string& out, opcode op, std::string_view payload, bool fin, bool rsv1) {
    std::array<char, 10> head{};
    std::size_t n = 0;
    head[n++] = static_cast<char>((fin ? fin_bit : 0) | (rsv1 ? rsv1_bit : 0) |
                                  static_cast<std::uint8_t>(op));
    const std::uint64_t size = payload.size();
    if (size < 126) {
        head[n++] = static_cast<char>(size);
    } else if (size <= 0xFFFF) {
        head[n++] = static_cast<char>(126);
        head[n++] = static_cast<char>((size >> 8) & 0xFF);
        head[n++] = static_cast<char>(size & 0xFF);
    } else {
        head[n++] = static_cast<char>(127);
        for (int shift = 56; shift >= 0; shift -= 8) {
            head[n++] = static_cast<char>((size >> shift) & 0xFF);
        }
    }
    out.reserve(out.size() + n + payload.size());
    out.append(head.data(), n);
    out.append(payload);
}

void append_close_frame(std::string& out, std::uint16_t code, std::string_view reason) {
    if (code == close_code::no_status) {
        // RFC 6455 5.5.1: a reason may only follow a code.
        append_frame(out, opcode::close, {});
        return;
    }
    if (reason.size() > max_close_reason) {
        std::size_t cut = max_close_reason;
        // Back up to the first byte of the character the cut would split.
        while (cut > 0 && (static_cast<std::uint8_t>(reason[cut]) & 0xC0) == 0x80) --cut;
        reason = reason.substr(0, cut);
    }
    // RFC 6455 5.5.1: the reason is UTF-8; a peer fails the connection on anything else, so
    // a reason that is not is dropped rather than sent.
    if (!is_valid_utf8(reason)) reason = {};
    std::array<char, max_control_payload> payload{};
    payload[0] = static_cast<char>(code >> 8);
    payload[1] = static_cast<char>(code & 0xFF);
    std::copy_n(reason.data(), reason.size(), payload.data() + 2);  // reason may be a null view
    append_frame(out, opcode::close, {payload.data(), 2 + reason.size()});
}

close_payload parse_close_payload(std::string_view payload) noexcept {
    close_payload out;
    if (payload.empty()) return out;  // RFC 6455 7.1.5: no status code (1005)
    if (payload.size() == 1) {
        out.error = close_code::protocol_error;
        return out;
    }
    out.code = static_cast<std::uint16_t>((static_cast<std::uint8_t>(payload[0]) << 8) |
                                          static_cast<std::uint8_t>(payload[1]));
    out.reason = payload.substr(2);
    if (!is_valid_close_code(out.code)) {
        out.error = close_code::protocol_error;
    } else if (!is_valid_utf8(out.reason)) {
        out.error = close_code::invalid_payload;  // RFC 6455 8.1
    }
    return out;
}

bool is_valid_close_code(std::uint16_t code) noexcept {
    // RFC 6455 7.4.1/7.4.2 and the IANA registry: 1004 is reserved, 1005, 1006 and 1015 are
    // never put on the wire, 1016-2999 are unassigned or for extensions not negotiated here,
    // 3000-4999 are for libraries and applications.
    if (code >= 1000 && code <= 1003) return true;
    if (code >= 1007 && code <= 1014) return true;
    return code >= 3000 && code <= 4999;
}

}  // namespace tern::detail::ws

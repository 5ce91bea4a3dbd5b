#include "support/ws_client.hpp"

#include <array>

namespace tern_test {

namespace {

constexpr std::array<unsigned char, 4> test_mask{0x37, 0xfa, 0x21, 0x3d};

}  // namespace

int ws_frame::close_code() const {
    if (payload.size() < 2) return 1005;
    return (static_cast<unsigned char>(payload[0]) << 8) | static_cast<unsigned char>(payload[1]);
}

std::string ws_frame::close_reason() const {
    return payload.size() > 2 ? payload.substr(2) : std::string();
}

std::string client_frame(int opcode, std::string_view payload, bool fin, bool masked, int rsv) {
    std::string out;
    out += static_cast<char>((fin ? 0x80 : 0) | ((rsv & 7) << 4) | (opcode & 0x0f));
    const unsigned char mask_bit = masked ? 0x80 : 0;
    const std::uint64_t n = payload.size();
    if (n < 126) {
        out += static_cast<char>(mask_bit | n);
    } else if (n < 65536) {
        out += static_cast<char>(mask_bit | 126);
        out += static_cast<char>(n >> 8);
        out += static_cast<char>(n & 0xff);
    } else {
        out += static_cast<char>(mask_bit | 127);
        for (int i = 7; i >= 0; --i) out += static_cast<char>((n >> (8 * i)) & 0xff);
    }
    if (masked) {
        for (unsigned char m : test_mask) out += static_cast<char>(m);
        for (std::size_t i = 0; i < payload.size(); ++i) {
            out += static_cast<char>(static_cast<unsigned char>(payload[i]) ^ test_mask[i % 4]);
        }
    } else {
        out += payload;
    }
    return out;
}

std::string client_close(int code, std::string_view reason) {
    std::string p;
    p += static_cast<char>((code >> 8) & 0xff);
    p += static_cast<char>(code & 0xff);
    p += reason;
    return client_frame(8, p);
}

std::string ws_upgrade_request(std::string_view target, std::string_view extra) {
    return get_request(target, std::string("Upgrade: websocket\r\nConnection: Upgrade\r\n"
                                           "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                                           "Sec-WebSocket-Version: 13\r\n") +
                                   std::string(extra));
}

ws_client::ws_client(std::uint16_t port, std::string_view target, std::string_view extra)
    : ws_client(raw_client(port), target, extra) {}

ws_client::ws_client(raw_client connected, std::string_view target, std::string_view extra)
    : raw(std::move(connected)) {
    raw.send(ws_upgrade_request(target, extra));
    handshake = raw.read_response(true);
}

std::optional<ws_frame> ws_client::read_frame(std::chrono::milliseconds timeout) {
    const auto until = std::chrono::steady_clock::now() + timeout;
    auto have = [&](std::size_t n) {
        while (raw.buffered().size() < n) {
            const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                until - std::chrono::steady_clock::now());
            if (left.count() <= 0 || !raw.receive_more(left)) return false;
        }
        return true;
    };
    if (!have(2)) return std::nullopt;
    const auto b = [&](std::size_t i) { return static_cast<unsigned char>(raw.buffered()[i]); };
    ws_frame f;
    f.fin = (b(0) & 0x80) != 0;
    f.rsv1 = (b(0) & 0x40) != 0;
    if ((b(0) & 0x30) != 0) throw client_error("server frame with RSV2/RSV3 set");
    f.opcode = b(0) & 0x0f;
    if ((b(1) & 0x80) != 0) throw client_error("server frame is masked (RFC 6455 5.1 forbids)");
    std::uint64_t n = b(1) & 0x7f;
    std::size_t at = 2;
    if (n == 126) {
        if (!have(4)) return std::nullopt;
        n = (std::uint64_t{b(2)} << 8) | b(3);
        if (n < 126) throw client_error("server used a non-minimal length");
        at = 4;
    } else if (n == 127) {
        if (!have(10)) return std::nullopt;
        n = 0;
        for (std::size_t i = 2; i < 10; ++i) n = (n << 8) | b(i);
        if (n < 65536) throw client_error("server used a non-minimal length");
        at = 10;
    }
    if (!have(at + n)) return std::nullopt;
    f.payload = raw.buffered().substr(at, n);
    raw.consume(at + n);
    return f;
}

int ws_client::read_close_code(std::chrono::milliseconds timeout) {
    const auto until = std::chrono::steady_clock::now() + timeout;
    for (;;) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
            until - std::chrono::steady_clock::now());
        if (left.count() <= 0) return 1006;
        const auto f = read_frame(left);
        if (!f) return 1006;
        if (f->opcode == 8) return f->close_code();
    }
}

}  // namespace tern_test

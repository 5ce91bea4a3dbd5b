#pragma once
/// @file ws_client.hpp
/// A WebSocket client for wire tests, written from RFC 6455 independently of tern's own
/// codec: it sends exactly the frames a test builds (masked or not, any bits, any split)
/// and decodes the server's frames strictly, so the tests see what tern put on the wire.

#include "support/raw_client.hpp"

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace tern_test {

/// One frame as the server sent it.
struct ws_frame {
    bool fin = true;
    bool rsv1 = false;
    int opcode = 0;
    std::string payload;
    /// For a close frame: the code (1005 when the payload is empty).
    int close_code() const;
    /// For a close frame: the reason.
    std::string close_reason() const;
};

/// A client frame: `opcode` with `payload`, masked with a fixed key unless `masked` is
/// false; `rsv` is the three RSV bits (RSV1 = 4).
std::string client_frame(int opcode, std::string_view payload, bool fin = true, bool masked = true,
                         int rsv = 0);
/// A masked close frame with `code` and `reason`.
std::string client_close(int code, std::string_view reason = {});

/// The upgrade request for `target` with a valid key and version 13, plus `extra` lines.
std::string ws_upgrade_request(std::string_view target, std::string_view extra = {});

/// A raw_client that has completed the handshake (or a test that does it by hand).
class ws_client {
public:
    /// Connects to `port` and sends the upgrade for `target`; `handshake` is the 101 (or the
    /// refusal: check `handshake.status`).
    ws_client(std::uint16_t port, std::string_view target, std::string_view extra = {});
    /// As above over a client already connected (e.g. one that has started TLS).
    ws_client(raw_client connected, std::string_view target, std::string_view extra = {});

    response handshake;
    raw_client raw;

    /// Sends bytes as they are.
    void send(std::string_view bytes) { raw.send(bytes); }
    /// Sends a masked text frame (one message).
    void send_text(std::string_view text) { raw.send(client_frame(1, text)); }
    /// Reads one frame; nullopt when none came within `timeout` or the server closed.
    std::optional<ws_frame> read_frame(std::chrono::milliseconds timeout = std::chrono::seconds(5));
    /// Reads frames until a close frame (answering nothing); returns its code, or 1006 when
    /// the connection ended (or `timeout` passed) without one. Data frames before it are
    /// skipped.
    int read_close_code(std::chrono::milliseconds timeout = std::chrono::seconds(5));
};

}  // namespace tern_test

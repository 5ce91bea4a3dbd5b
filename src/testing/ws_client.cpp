#include <tern/testing.hpp>

#include "testing/response_reader.hpp"
#include "testing/stream.hpp"
#include "testing/ws_frames.hpp"
#include "testing/ws_handshake.hpp"

#include <algorithm>
#include <array>
#include <optional>
#include <random>
#include <stdexcept>
#include <utility>

namespace tern::testing {

namespace {

// The largest message the client takes: a broken server cannot make a test eat all memory.
constexpr std::size_t max_message_size = 256 * 1024 * 1024;
// How much of a refusal's body goes into the error message.
// After the closing handshake the server closes the TCP connection first (RFC 6455 section
// 7.1.1); the client waits this long for that before closing its side itself.
constexpr std::chrono::milliseconds tcp_close_wait{1000};

const header* find_field(const header_list& fields, std::string_view name) {
    const auto it = std::find_if(fields.begin(), fields.end(), [name](const testing::header& h) {
        return detail::iequals(h.name, name);
    });
    return it == fields.end() ? nullptr : &*it;
}

}  // namespace

ws_closed::ws_closed(const std::string& message, int code, std::string reason)
    : stream_ended(message), code_(code), reason_(std::move(reason)) {}

int ws_closed::code() const noexcept { return code_; }

const std::string& ws_closed::reason() const noexcept { return reason_; }

struct ws_client::impl {
    std::uint16_t port;
    std::string target;
    ws_options options;
    std::optional<detail::stream> connection;
    std::string buffer;  // received bytes not yet decoded
    header_list head;
    std::string chosen;  // the subprotocol
    std::mt19937 random{std::random_device{}()};
    // The data message arriving in fragments.
    bool in_message = false;
    bool message_binary = false;
    std::string message;
    bool close_sent = false;
    std::optional<detail::ws_close> server_close;  // 1006 when the connection ended bare

    impl(std::uint16_t p, std::string t, ws_options o)
        : port(p), target(std::move(t)), options(std::move(o)) {}

    std::string describe() const { return "tern::testing: WebSocket " + target; }

    detail::clock::time_point deadline() const { return detail::clock::now() + options.timeout; }

    std::string timeout_text() const {
        return " (" + std::to_string(options.timeout.count()) + " ms)";
    }

    // The handshake (RFC 6455 section 4.1); the options' fields replace the kit's of the same
    // name.
    void open() {
        const auto until = deadline();
        try {
            connection.emplace(port, detail::http1_stream(options.tls), until);
            std::array<char, 16> nonce{};
            for (char& c : nonce) c = static_cast<char>(random() & 0xFF);
            std::string key = detail::base64(std::string_view(nonce.data(), nonce.size()));
            if (const header* given = find_field(options.headers, "Sec-WebSocket-Key")) {
                key = given->value;
            }
            std::string offered;
            for (const std::string& p : options.subprotocols) {
                offered += (offered.empty() ? "" : ", ") + p;
            }
            const header_list kit_fields = {{"Host", "127.0.0.1:" + std::to_string(port)},
                                            {"Upgrade", "websocket"},
                                            {"Connection", "Upgrade"},
                                            {"Sec-WebSocket-Key", key},
                                            {"Sec-WebSocket-Version", "13"},
                                            {"Sec-WebSocket-Protocol", offered}};
            std::string request = "GET " + target + " HTTP/1.1\r\n";
            for (const testing::header& h : kit_fields) {
                if (h.value.empty() || find_field(options.headers, h.name)) continue;
                request.append(h.name).append(": ").append(h.value).append("\r\n");
            }
            for (const testing::header& h : options.headers) {
                request.append(h.name).append(": ").append(h.value).append("\r\n");
            }
            request += "\r\n";
            if (!connection->send_all(request, until)) {
                throw client_error(
                    "the server closed the connection before the handshake was sent");
            }
            detail::head_result result = detail::read_head(*connection, buffer, until);
            if (result.response.status != 101) refused(result, until);
            check_answer(result.response, key);
            head = std::move(result.response.headers);
        } catch (const detail::closed_before_response&) {
            drop();
            throw client_error(describe() + ": the server closed the connection without answering");
        } catch (const timeout_error& e) {
            drop();
            throw timeout_error(describe() + ": " + e.what() + timeout_text());
        } catch (const client_error& e) {
            drop();
            throw client_error(describe() + ": " + e.what());
        }
    }

    // Section 4.1, the client's checks of the server's 101.
    void check_answer(const response& r, const std::string& key) {
        const auto upgrade = r.header("Upgrade");
        if (!upgrade || !detail::iequals(*upgrade, "websocket")) {
            throw client_error("the 101 has no Upgrade: websocket");
        }
        const auto connection_field = r.header("Connection");
        if (!connection_field || !detail::has_token(*connection_field, "upgrade")) {
            throw client_error("the 101 has no Connection: Upgrade");
        }
        const auto accept = r.header("Sec-WebSocket-Accept");
        const std::string expected = detail::websocket_accept(key);
        if (!accept || *accept != expected) {
            throw client_error("the 101's Sec-WebSocket-Accept is '" +
                               std::string(accept.value_or("")) + "', not '" + expected + "'");
        }
        if (const auto extensions = r.header("Sec-WebSocket-Extensions")) {
            throw client_error("the 101 names an extension the client did not offer: '" +
                               std::string(*extensions) + "'");
        }
        if (const auto protocol = r.header("Sec-WebSocket-Protocol")) {
            const auto& offered = options.subprotocols;
            if (std::find(offered.begin(), offered.end(), *protocol) == offered.end()) {
                throw client_error("the 101 chose the subprotocol '" + std::string(*protocol) +
                                   "', which the client did not offer");
            }
            chosen = *protocol;
        }
    }

    // Not a 101: reads a little of the body for the message, then throws.
    [[noreturn]] void refused(detail::head_result& result, detail::clock::time_point until) {
        const response& r = result.response;
        std::string what = "the server answered " + std::to_string(r.status);
        if (!r.reason.empty()) what += " " + r.reason;
        what += " instead of 101 Switching Protocols";
        what = detail::describe_refusal(*connection, buffer, result, std::move(what), until);
        throw client_error(what);
    }

    void drop() noexcept {
        connection.reset();
        buffer.clear();
    }

    ws_closed closed() const {
        const detail::ws_close& c = *server_close;
        std::string what = describe() + ": ";
        if (c.code == 1006) {
            what += "the connection ended without a Close frame (1006)";
        } else {
            what += "the server closed the WebSocket with " + std::to_string(c.code);
            if (!c.reason.empty()) what += " (" + c.reason + ")";
        }
        return ws_closed(what, c.code, c.reason);
    }

    // Checks that frames may still be sent.
    void check_sendable() const {
        if (server_close) throw closed();
        if (!connection)
            throw client_error(describe() + ": the connection was dropped after an error");
    }

    // Sends bytes; the server having gone counts as its bare close (1006).
    void send_bytes(std::string_view bytes, detail::clock::time_point until) {
        if (!connection->send_all(bytes, until)) {
            drop();
            server_close = detail::ws_close{1006, {}};
            throw closed();
        }
    }

    void send_frame(std::uint8_t opcode, std::string_view payload,
                    detail::clock::time_point until) {
        std::string frame;
        detail::append_client_frame(frame, opcode, true, payload, new_mask());
        send_bytes(frame, until);
    }

    detail::ws_mask new_mask() {
        const auto bits = static_cast<std::uint32_t>(random());
        return {static_cast<std::uint8_t>(bits >> 24), static_cast<std::uint8_t>(bits >> 16),
                static_cast<std::uint8_t>(bits >> 8), static_cast<std::uint8_t>(bits)};
    }

    void send_message(std::uint8_t opcode, std::string_view data) {
        check_sendable();
        if (close_sent) throw client_error(describe() + ": close() was called: no more messages");
        guarded(
            [&](detail::clock::time_point until) {
                const std::size_t piece =
                    options.fragment_size == 0 ? data.size() : options.fragment_size;
                std::string frames;
                std::size_t at = 0;
                do {
                    const std::string_view part = data.substr(at, piece);
                    at += part.size();
                    detail::append_client_frame(
                        frames, at == part.size() ? opcode : detail::ws_opcode::continuation,
                        at == data.size(), part, new_mask());
                } while (at < data.size());
                send_bytes(frames, until);
                return 0;
            },
            "the server took no more within the timeout");
    }

    // The next frame, or std::nullopt when the connection ended.
    std::optional<detail::ws_frame> read_frame(detail::clock::time_point until) {
        for (;;) {
            std::size_t used = 0;
            if (auto frame = detail::parse_server_frame(buffer, used, max_message_size)) {
                buffer.erase(0, used);
                return frame;
            }
            std::array<char, 16384> chunk{};
            const std::size_t n = connection->receive(chunk.data(), chunk.size(), until);
            if (n == 0) return std::nullopt;
            buffer.append(chunk.data(), n);
        }
    }

    // Handles frames until a data message is complete (returned) or the server has closed
    // (server_close set, std::nullopt). Pings are answered until the client sent its Close.
    std::optional<ws_message> next_message(detail::clock::time_point until) {
        for (;;) {
            std::optional<detail::ws_frame> frame = read_frame(until);
            if (!frame) {
                drop();
                server_close = detail::ws_close{1006, {}};
                return std::nullopt;
            }
            switch (frame->opcode) {
                case detail::ws_opcode::ping:
                    if (!close_sent) send_frame(detail::ws_opcode::pong, frame->payload, until);
                    continue;
                case detail::ws_opcode::pong:
                    continue;
                case detail::ws_opcode::close: {
                    detail::ws_close c = detail::parse_close_payload(frame->payload);
                    server_close = c;
                    if (!close_sent) {
                        // Section 5.5.1: the answer echoes the code (no payload when it had none).
                        close_sent = true;
                        std::string frame_bytes;
                        detail::append_client_frame(
                            frame_bytes, detail::ws_opcode::close, true,
                            c.code == 1005 ? std::string() : detail::close_payload(c.code, {}),
                            new_mask());
                        connection->send_all(frame_bytes, until);
                    }
                    await_tcp_close(until);
                    return std::nullopt;
                }
                case detail::ws_opcode::text:
                case detail::ws_opcode::binary:
                    if (in_message) {
                        throw client_error("a new WebSocket message inside a fragmented one");
                    }
                    in_message = true;
                    message_binary = frame->opcode == detail::ws_opcode::binary;
                    message = std::move(frame->payload);
                    break;
                default:  // continuation
                    if (!in_message) {
                        throw client_error("a WebSocket continuation frame without a message");
                    }
                    if (message.size() + frame->payload.size() > max_message_size) {
                        throw client_error(
                            "a WebSocket message over the client's limit of 256 MiB");
                    }
                    message += frame->payload;
                    break;
            }
            if (!frame->fin) continue;
            in_message = false;
            if (!message_binary && !detail::valid_utf8(message)) {
                throw client_error("a WebSocket text message that is not UTF-8");
            }
            return ws_message{message_binary, std::exchange(message, {})};
        }
    }

    // The server closes the TCP connection once its Close is answered: waited for a little,
    // then the client's side is closed.
    void await_tcp_close(detail::clock::time_point until) noexcept {
        try {
            const auto limit = std::min(until, detail::clock::now() + tcp_close_wait);
            std::array<char, 4096> chunk{};
            while (connection->receive_until(chunk.data(), chunk.size(), limit) > 0) {
            }
        } catch (const client_error&) {
            // The connection is dropped below either way.
        }
        drop();
    }

    // Runs `fn(deadline)` with the error translation of the calls that wait: a timeout names
    // `waiting_for`; a protocol error drops the connection; ws_closed passes through.
    template <class Fn>
    auto guarded(Fn&& fn, const char* waiting_for) -> decltype(fn(detail::clock::time_point{})) {
        try {
            return fn(deadline());
        } catch (const ws_closed&) {
            throw;
        } catch (const timeout_error&) {
            throw timeout_error(describe() + ": " + waiting_for + timeout_text());
        } catch (const client_error& e) {
            drop();
            throw client_error(describe() + ": " + e.what());
        }
    }

    // Waits for the server's Close (or the end of the connection) and returns its code;
    // data messages meanwhile are discarded.
    int until_closed(const char* waiting_for) {
        return guarded(
            [&](detail::clock::time_point until) {
                while (next_message(until)) {
                }
                return server_close->code;
            },
            waiting_for);
    }
};

ws_client::ws_client(std::uint16_t port, std::string target, ws_options options)
    : impl_(std::make_unique<impl>(port, std::move(target), std::move(options))) {
    impl_->open();
}

ws_client::~ws_client() = default;
ws_client::ws_client(ws_client&& other) noexcept = default;
ws_client& ws_client::operator=(ws_client&& other) noexcept = default;

const std::string& ws_client::subprotocol() const noexcept { return impl_->chosen; }

const header_list& ws_client::headers() const noexcept { return impl_->head; }

void ws_client::send_text(std::string_view text) {
    impl_->send_message(detail::ws_opcode::text, text);
}

void ws_client::send_binary(std::string_view bytes) {
    impl_->send_message(detail::ws_opcode::binary, bytes);
}

ws_message ws_client::receive() {
    impl& self = *impl_;
    self.check_sendable();
    return self.guarded(
        [&](detail::clock::time_point until) {
            if (auto message = self.next_message(until)) return std::move(*message);
            throw self.closed();
        },
        "no message within the timeout");
}

void ws_client::ping(std::string_view payload) {
    if (payload.size() > 125) {
        throw std::invalid_argument("tern::testing: a ping payload is at most 125 bytes");
    }
    impl& self = *impl_;
    self.check_sendable();
    self.guarded(
        [&](detail::clock::time_point until) {
            self.send_frame(detail::ws_opcode::ping, payload, until);
            return 0;
        },
        "the server took no more within the timeout");
}

int ws_client::close(int code, std::string_view reason) {
    if (code < 1000 || code > 4999) {
        throw std::invalid_argument("tern::testing: a close code is 1000-4999, not " +
                                    std::to_string(code));
    }
    if (reason.size() > 123) {
        throw std::invalid_argument("tern::testing: a close reason is at most 123 bytes");
    }
    impl& self = *impl_;
    if (self.server_close) return self.server_close->code;
    self.check_sendable();
    if (!self.close_sent) {
        try {
            self.guarded(
                [&](detail::clock::time_point until) {
                    self.close_sent = true;
                    self.send_frame(detail::ws_opcode::close, detail::close_payload(code, reason),
                                    until);
                    return 0;
                },
                "the server took no more within the timeout");
        } catch (const ws_closed&) {
            return self.server_close->code;  // the connection had ended: 1006
        }
    }
    return self.until_closed("no Close from the server within the timeout");
}

int ws_client::wait_close() {
    impl& self = *impl_;
    if (self.server_close) return self.server_close->code;
    self.check_sendable();
    return self.until_closed("the server kept the WebSocket open past the timeout");
}

void ws_client::send_raw(std::string_view bytes) {
    impl& self = *impl_;
    self.check_sendable();
    self.guarded(
        [&](detail::clock::time_point until) {
            self.send_bytes(bytes, until);
            return 0;
        },
        "the server took no more within the timeout");
}

}  // namespace tern::testing

// A gRPC service on tern's routes, for tests/grpc/grpc_client.py (docs/grpc.md): the service
// tern.test.Echo of echo.proto, over HTTP/2 (h2c on the plain port, h2 over TLS with --cert
// and --key). gRPC over HTTP/2 is `POST /package.Service/Method` with `content-type:
// application/grpc`, each message framed as a compressed flag and a 4-byte big-endian length,
// and the call's status in the response's trailers (`grpc-status`, `grpc-message`). The
// messages (one string field) are encoded here by hand: tern has no protobuf code.
//
//     tern_grpc_service PORT [--cert FILE --key FILE]
//
// Prints "grpc_service: listening on PORT" before it binds; SIGTERM stops it.

#include <tern/tern.hpp>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>
#include <thread>

namespace {

// gRPC status codes (grpc/doc/statuscodes.md).
constexpr int grpc_ok = 0;
constexpr int grpc_invalid_argument = 3;
constexpr int grpc_unimplemented = 12;
constexpr int grpc_internal = 13;

// ---- protobuf: `message Message { string text = 1; }` ---------------------------------------

std::optional<std::uint64_t> read_varint(std::string_view in, std::size_t& at) {
    std::uint64_t value = 0;
    for (int shift = 0; shift < 64 && at < in.size(); shift += 7) {
        const auto byte = static_cast<unsigned char>(in[at++]);
        value |= std::uint64_t{byte & 0x7fu} << shift;
        if ((byte & 0x80u) == 0) return value;
    }
    return std::nullopt;
}

void write_varint(std::string& out, std::uint64_t value) {
    while (value >= 0x80) {
        out += static_cast<char>((value & 0x7f) | 0x80);
        value >>= 7;
    }
    out += static_cast<char>(value);
}

// The text of a Message (the last field 1 wins, as protobuf merges); nullopt when malformed.
// Fields of other numbers are skipped by their wire type.
std::optional<std::string> decode_message(std::string_view in) {
    std::string text;
    std::size_t at = 0;
    while (at < in.size()) {
        const auto tag = read_varint(in, at);
        if (!tag) return std::nullopt;
        const auto wire_type = *tag & 7;
        if (wire_type == 0) {
            if (!read_varint(in, at)) return std::nullopt;
        } else if (wire_type == 2) {
            const auto length = read_varint(in, at);
            if (!length || *length > in.size() - at) return std::nullopt;
            if (*tag >> 3 == 1) text.assign(in.substr(at, *length));
            at += *length;
        } else if (wire_type == 1 || wire_type == 5) {
            const std::size_t size = wire_type == 1 ? 8 : 4;
            if (size > in.size() - at) return std::nullopt;
            at += size;
        } else {
            return std::nullopt;
        }
    }
    return text;
}

std::string encode_message(std::string_view text) {
    std::string out;
    if (text.empty()) return out;  // proto3 leaves a default value out
    out += '\x0a';                 // field 1, wire type 2 (length-delimited)
    write_varint(out, text.size());
    out.append(text);
    return out;
}

// ---- gRPC's message framing over HTTP/2 ------------------------------------------------------

// One length-prefixed message: flag 0 (not compressed), the length (4 bytes, big-endian).
std::string frame(std::string_view message) {
    std::string out(5, '\0');
    const auto n = static_cast<std::uint32_t>(message.size());
    out[1] = static_cast<char>(n >> 24);
    out[2] = static_cast<char>(n >> 16);
    out[3] = static_cast<char>(n >> 8);
    out[4] = static_cast<char>(n);
    return out.append(message);
}

// The one message of a unary or server-streaming request body; nullopt when the body is not
// exactly one uncompressed message.
std::optional<std::string_view> unframe(std::string_view body) {
    if (body.size() < 5 || body[0] != '\0') return std::nullopt;
    const auto byte = [&](std::size_t i) {
        return std::uint32_t{static_cast<unsigned char>(body[i])};
    };
    const std::uint32_t n = byte(1) << 24 | byte(2) << 16 | byte(3) << 8 | byte(4);
    if (body.size() - 5 != n) return std::nullopt;
    return body.substr(5);
}

// Ends the call with `status` (and `message`, for an error) in the trailers. A call that fails
// before any message is an empty body with them.
void finish(tern::context& ctx, int status, std::string_view message = {}) {
    ctx.trailer("grpc-status", std::to_string(status));
    if (!message.empty()) ctx.trailer("grpc-message", message);
}

// The request's one message, decoded; on failure the call is finished with an error status.
std::optional<std::string> request_text(tern::context& ctx) {
    ctx.status(200).content_type("application/grpc");
    const auto type = ctx.header("content-type").value_or("");
    if (!type.starts_with("application/grpc")) {
        finish(ctx, grpc_internal, "content-type is not application/grpc");
        return std::nullopt;
    }
    const auto body = ctx.body();
    if (body.size() >= 5 && body[0] != '\0') {
        finish(ctx, grpc_unimplemented, "compressed messages are not supported");
        return std::nullopt;
    }
    const auto message = unframe(body);
    auto text = message ? decode_message(*message) : std::nullopt;
    if (!text) finish(ctx, grpc_internal, "malformed request message");
    return text;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: grpc_service PORT [--cert FILE --key FILE]\n");
        return 2;
    }
    const auto port = static_cast<std::uint16_t>(std::stoi(argv[1]));
    std::string cert, key;
    for (int i = 2; i + 1 < argc; ++i) {
        const std::string_view arg = argv[i];
        if (arg == "--cert") cert = argv[++i];
        if (arg == "--key") key = argv[++i];
    }
    tern::config cfg;
    cfg.threads = 1;
    tern::app app(cfg);

    // Unary: one message in, one out, then the status.
    app.post("/tern.test.Echo/Say", [](tern::context& ctx) {
        const auto text = request_text(ctx);
        if (!text) return;
        if (text->empty()) {
            finish(ctx, grpc_invalid_argument, "text is empty");
            return;
        }
        ctx.result(frame(encode_message("hello, " + *text)));
        ctx.trailer("x-answered-by", "tern");  // application metadata, beside the status
        finish(ctx, grpc_ok);
    });

    // Server streaming: N messages written from another thread as a stream, then the status
    // in the stream's trailers.
    app.post("/tern.test.Echo/Count", [](tern::context& ctx) {
        const auto text = request_text(ctx);
        if (!text) return;
        int n = 0;
        try {
            n = std::stoi(*text);
        } catch (const std::exception&) {
            n = 0;
        }
        if (n < 1 || n > 1000) {
            finish(ctx, grpc_invalid_argument, "text is not a count of 1 to 1000");
            return;
        }
        auto stream = ctx.stream();
        std::thread([stream, n] {
            for (int i = 1; i <= n; ++i) {
                stream.write(frame(encode_message(std::to_string(i))));
                std::this_thread::sleep_for(std::chrono::milliseconds(1));
            }
            stream.trailer("x-messages", std::to_string(n));
            stream.trailer("grpc-status", std::to_string(grpc_ok));
            stream.end();
        }).detach();
    });

    if (!cert.empty()) app.tls(cert, key);
    std::printf("grpc_service: listening on %u\n", static_cast<unsigned>(port));
    std::fflush(stdout);
    app.listen("127.0.0.1", port);  // SIGTERM stops it
}

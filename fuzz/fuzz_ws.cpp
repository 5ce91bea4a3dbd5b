// libFuzzer harness for the WebSocket codec (src/ws/): client frames, the text and close
// payloads in them, permessage-deflate data and extension offers, all of which a client
// controls completely.
//
// Input: byte 0 picks how the stream is cut into reads (1 to 64 bytes, or whole) and whether
// RSV1 is allowed; byte 1 is the length of an extension offer that follows (read by
// negotiate_deflate); the rest is the frame stream. The stream is parsed twice, in those
// reads and whole, as a connection would use the parser: each text message goes through
// utf8_validator piece by piece, each close payload through parse_close_payload, each
// message with RSV1 through an inflater with a 64 KiB limit, and the first few other data
// messages through a deflater and back. Broken invariants call __builtin_trap().

#include "ws/deflate.hpp"
#include "ws/frame.hpp"
#include "ws/utf8.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ws = tern::detail::ws;

namespace {

constexpr std::uint64_t max_payload = 1 << 20;
constexpr std::size_t inflate_limit = 64 * 1024;

void check(bool ok) {
    if (!ok) __builtin_trap();
}

// What a parse produced, compared between the two ways of reading the same stream.
struct outcome {
    std::vector<std::uint64_t> frames;  // per frame: opcode, flags and length, packed
    std::string data;                   // every data payload, in order
    std::string controls;               // every control payload, in order
    std::uint16_t error = 0;
    bool operator==(const outcome&) const = default;
};

// The message being assembled, as a connection would.
struct message {
    bool open = false;
    bool text = false;
    bool compressed = false;
    std::string data;
    ws::utf8_validator utf8;
    bool utf8_ok = true;
};

// At most this many messages of one input go through a fresh deflater and back (zlib's
// state is about 256 KiB; an input of many tiny messages would spend its time allocating).
constexpr int max_round_trips = 4;

void finish_message(message& m, const ws::deflate_params& params, ws::inflater& inflater,
                    int& round_trips) {
    if (m.compressed) {
        std::string out;
        const auto st = inflater.inflate(m.data, out, inflate_limit);
        check(out.size() <= inflate_limit);
        if (st == ws::inflater::status::ok && m.text) (void)ws::is_valid_utf8(out);
    } else {
        // The message is valid when every piece was and no character is left open.
        if (m.text) check((m.utf8_ok && m.utf8.complete()) == ws::is_valid_utf8(m.data));
        if (m.data.size() <= inflate_limit && round_trips++ < max_round_trips) {
            // The server's compressor read back by a decompressor: the same bytes.
            ws::deflater d(params, 1);
            ws::inflater i(params);
            std::string wire;
            d.deflate(m.data, wire);
            std::string back;
            check(i.inflate(wire, back, m.data.size()) == ws::inflater::status::ok);
            check(back == m.data);
        }
    }
    m = message{};
}

void on_close_payload(std::string_view payload) {
    const auto c = ws::parse_close_payload(payload);
    check(c.error == 0 || c.error == ws::close_code::protocol_error ||
          c.error == ws::close_code::invalid_payload);
    if (c.error != 0) return;
    if (payload.empty()) {
        check(c.code == ws::close_code::no_status && c.reason.empty());
        return;
    }
    check(ws::is_valid_close_code(c.code));
    check(ws::is_valid_utf8(c.reason));
    // What we would echo back fits a control frame and reads back the same.
    std::string out;
    ws::append_close_frame(out, c.code, c.reason);
    check(out.size() >= 4 && out.size() <= 2 + 125);
    const auto again = ws::parse_close_payload(std::string_view(out).substr(2));
    check(again.error == 0 && again.code == c.code);
    check(c.reason.substr(0, again.reason.size()) == again.reason);
}

outcome parse(std::string_view stream, std::size_t read_size, bool rsv1_allowed,
              const ws::deflate_params& params) {
    outcome o;
    ws::frame_parser parser(max_payload, rsv1_allowed);
    ws::inflater inflater(params);
    message m;
    int round_trips = 0;
    std::string frame_data;
    while (!stream.empty()) {
        std::string_view read = stream.substr(0, read_size);
        stream.remove_prefix(read.size());
        while (true) {
            const std::size_t before = frame_data.size();
            const auto r = parser.feed(read, frame_data);
            check(r.consumed <= read.size());
            read.remove_prefix(r.consumed);
            const auto& h = parser.header();
            if (frame_data.size() != before) {
                check(!ws::is_control(h.op));
                if (m.text && !m.compressed) {
                    m.utf8_ok =
                        m.utf8.feed(std::string_view(frame_data).substr(before)) && m.utf8_ok;
                }
            }
            if (r.what == ws::frame_parser::event::need_more) {
                check(read.empty());
                break;
            }
            if (r.what == ws::frame_parser::event::error) {
                o.error = parser.error_code();
                check(o.error == ws::close_code::protocol_error ||
                      o.error == ws::close_code::too_big);
                check(*parser.error_reason() != '\0');
                const auto again = parser.feed(read, frame_data);
                check(again.what == ws::frame_parser::event::error && again.consumed == 0);
                check(parser.error_code() == o.error);
                return o;
            }
            if (r.what == ws::frame_parser::event::frame_start) {
                o.frames.push_back((h.length << 8) | (static_cast<std::uint64_t>(h.op) << 2) |
                                   (h.fin ? 2U : 0U) | (h.rsv1 ? 1U : 0U));
                if (ws::is_control(h.op)) {
                    check(h.fin && !h.rsv1 && h.length <= 125);
                } else {
                    check(h.length <= max_payload);
                    check(rsv1_allowed || !h.rsv1);
                    check(!h.rsv1 || h.op != ws::opcode::continuation);
                    if (h.op != ws::opcode::continuation) {
                        m = message{};
                        m.open = true;
                        m.text = h.op == ws::opcode::text;
                        m.compressed = h.rsv1;
                    }
                }
                frame_data.clear();
                continue;
            }
            // frame_end
            if (ws::is_control(h.op)) {
                const std::string_view payload = parser.control_payload();
                check(payload.size() == h.length);
                o.controls.append(payload);
                if (h.op == ws::opcode::close) on_close_payload(payload);
                continue;
            }
            check(frame_data.size() == h.length);
            o.data += frame_data;
            if (m.open && m.data.size() + frame_data.size() <= max_payload) {
                m.data += frame_data;
                if (h.fin) finish_message(m, params, inflater, round_trips);
            } else {
                m = message{};  // a continuation with no message: the connection's error
            }
            frame_data.clear();
        }
    }
    return o;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* bytes, std::size_t size) {
    if (size < 2) return 0;
    const std::uint8_t mode = bytes[0];
    const std::size_t offer_size = std::min<std::size_t>(bytes[1], size - 2);
    const std::string_view offer(reinterpret_cast<const char*>(bytes) + 2, offer_size);
    const std::string_view stream(reinterpret_cast<const char*>(bytes) + 2 + offer_size,
                                  size - 2 - offer_size);

    ws::deflate_params params;
    if (const auto p = ws::negotiate_deflate(offer, (mode & 0x80) != 0)) {
        check(p->server_max_window_bits >= 9 && p->server_max_window_bits <= 15);
        check(p->client_max_window_bits >= 8 && p->client_max_window_bits <= 15);
        // The answer, read as an offer, gives the same parameters.
        const std::string answer = ws::format_deflate_answer(*p);
        const auto back = ws::negotiate_deflate(answer, false);
        check(back.has_value());
        check(back->server_no_context_takeover == p->server_no_context_takeover &&
              back->client_no_context_takeover == p->client_no_context_takeover &&
              back->server_max_window_bits == p->server_max_window_bits &&
              back->client_max_window_bits == p->client_max_window_bits);
        params = *p;
    }

    const bool rsv1_allowed = (mode & 0x40) != 0;
    const std::size_t read_size = (mode & 0x3F) + 1U;
    const outcome pieces = parse(stream, read_size, rsv1_allowed, params);
    const outcome whole = parse(stream, stream.size() + 1, rsv1_allowed, params);
    check(pieces == whole);
    return 0;
}

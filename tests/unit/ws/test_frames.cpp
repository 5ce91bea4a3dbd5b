// The WebSocket frame parser and writer (src/ws/frame.hpp) with bytes built here: the rules
// of RFC 6455 section 5 one frame can break, each with the close code it must give, and the
// same frames fed whole, one byte at a time and split at every offset.

#include <catch2/catch.hpp>

#include "ws/frame.hpp"

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace unit_test_ws_frames {

using namespace tern::detail::ws;

namespace {

constexpr std::array<std::uint8_t, 4> test_mask = {0x37, 0xfa, 0x21, 0x3d};

// A client frame: FIN/RSV bits and opcode in `b0`, masked with `mask` (unmasked when
// `masked` is false), the length in the shortest form.
std::string client_frame(std::uint8_t b0, std::string_view payload, bool masked = true,
                         std::array<std::uint8_t, 4> mask = test_mask) {
    std::string out;
    out += static_cast<char>(b0);
    const std::uint8_t mask_bit = masked ? 0x80 : 0x00;
    const std::uint64_t n = payload.size();
    if (n < 126) {
        out += static_cast<char>(mask_bit | n);
    } else if (n <= 0xFFFF) {
        out += static_cast<char>(mask_bit | 126);
        out += static_cast<char>(n >> 8);
        out += static_cast<char>(n & 0xFF);
    } else {
        out += static_cast<char>(mask_bit | 127);
        for (int shift = 56; shift >= 0; shift -= 8) out += static_cast<char>((n >> shift) & 0xFF);
    }
    if (masked) {
        for (const auto b : mask) out += static_cast<char>(b);
    }
    for (std::size_t i = 0; i < payload.size(); ++i) {
        const auto byte = static_cast<std::uint8_t>(payload[i]);
        out += static_cast<char>(masked ? byte ^ mask[i % 4] : byte);
    }
    return out;
}

std::string bytes(std::initializer_list<int> list) {
    std::string out;
    for (const int b : list) out += static_cast<char>(b);
    return out;
}

std::string pattern(std::size_t n) {
    std::string s(n, '\0');
    for (std::size_t i = 0; i < n; ++i) s[i] = static_cast<char>((i * 7 + i / 251) & 0xFF);
    return s;
}

// What one parser made of a stream: the events in order, the data payloads, the control
// payloads, and the error if any.
struct trace {
    std::vector<frame_parser::event> events;
    std::vector<frame_header> headers;
    std::string data;
    std::vector<std::string> controls;
    std::uint16_t error = 0;
    bool operator==(const trace& o) const {
        if (headers.size() != o.headers.size()) return false;
        for (std::size_t i = 0; i < headers.size(); ++i) {
            const auto& a = headers[i];
            const auto& b = o.headers[i];
            if (a.fin != b.fin || a.rsv1 != b.rsv1 || a.op != b.op || a.length != b.length) {
                return false;
            }
        }
        return events == o.events && data == o.data && controls == o.controls && error == o.error;
    }
};

// Feeds `pieces` in turn, looping on each until it is used up (as a connection would),
// recording every event except need_more.
trace run(const std::vector<std::string_view>& pieces, std::uint64_t max_payload = 1 << 20,
          bool rsv1_allowed = false) {
    frame_parser p(max_payload, rsv1_allowed);
    trace t;
    for (std::string_view piece : pieces) {
        for (;;) {
            const auto r = p.feed(piece, t.data);
            REQUIRE(r.consumed <= piece.size());
            piece.remove_prefix(r.consumed);
            if (r.what == frame_parser::event::error) {
                t.events.push_back(r.what);
                t.error = p.error_code();
                return t;
            }
            if (r.what == frame_parser::event::need_more) {
                REQUIRE(piece.empty());
                break;
            }
            t.events.push_back(r.what);
            if (r.what == frame_parser::event::frame_start) t.headers.push_back(p.header());
            if (r.what == frame_parser::event::frame_end && is_control(p.header().op)) {
                t.controls.emplace_back(p.control_payload());
            }
        }
    }
    return t;
}

trace run_whole(std::string_view stream, std::uint64_t max_payload = 1 << 20,
                bool rsv1_allowed = false) {
    return run({stream}, max_payload, rsv1_allowed);
}

// The close code a single frame's bytes give, or 0.
std::uint16_t error_of(const std::string& frame, std::uint64_t max_payload = 1 << 20,
                       bool rsv1_allowed = false) {
    return run_whole(frame, max_payload, rsv1_allowed).error;
}

using ev = frame_parser::event;

}  // namespace

TEST_CASE("a masked text frame gives frame_start, its unmasked payload and frame_end",
          "[ws][frames]") {
    const std::string frame = client_frame(0x81, "Hello");
    frame_parser p(1024, false);
    std::string data;
    auto r = p.feed(frame, data);
    CHECK(r.what == ev::frame_start);
    CHECK(r.consumed == 6);
    CHECK(p.header().fin);
    CHECK_FALSE(p.header().rsv1);
    CHECK(p.header().op == opcode::text);
    CHECK(p.header().length == 5);
    r = p.feed(std::string_view(frame).substr(6), data);
    CHECK(r.what == ev::frame_end);
    CHECK(r.consumed == 5);
    CHECK(data == "Hello");
}

TEST_CASE("the RFC 6455 5.7 masked Hello example is unmasked", "[ws][frames]") {
    const std::string frame =
        bytes({0x81, 0x85, 0x37, 0xfa, 0x21, 0x3d, 0x7f, 0x9f, 0x4d, 0x51, 0x58});
    const auto t = run_whole(frame);
    CHECK(t.events == std::vector{ev::frame_start, ev::frame_end});
    CHECK(t.data == "Hello");
}

TEST_CASE("an empty payload gives frame_start then frame_end", "[ws][frames]") {
    const std::string frame = client_frame(0x82, "");
    frame_parser p(1024, false);
    std::string data;
    auto r = p.feed(frame, data);
    CHECK(r.what == ev::frame_start);
    CHECK(r.consumed == frame.size());
    r = p.feed({}, data);
    CHECK(r.what == ev::frame_end);
    CHECK(r.consumed == 0);
    CHECK(data.empty());
    r = p.feed({}, data);
    CHECK(r.what == ev::need_more);
}

TEST_CASE("a frame fed one byte at a time gives the same events and payload", "[ws][frames]") {
    for (const std::size_t n : {0U, 1U, 125U, 126U, 300U, 65535U, 65536U, 70000U}) {
        const std::string payload = pattern(n);
        const std::string frame = client_frame(0x82, payload);
        std::vector<std::string_view> pieces;
        for (std::size_t i = 0; i < frame.size(); ++i)
            pieces.push_back(std::string_view(frame).substr(i, 1));
        const auto t = run(pieces);
        CAPTURE(n);
        CHECK(t.error == 0);
        CHECK(t.events == std::vector{ev::frame_start, ev::frame_end});
        CHECK(t.data == payload);
        CHECK(t == run_whole(frame));
    }
}

TEST_CASE("frames split into two feeds at every offset parse the same", "[ws][frames]") {
    // A text frame (16-bit length), a ping, a continuation, an empty final frame: every
    // header form, a control frame between fragments and mask offsets across feeds.
    const std::string stream = client_frame(0x01, pattern(300)) +
                               client_frame(0x89, "ping!", true, {1, 2, 3, 4}) +
                               client_frame(0x00, pattern(37)) + client_frame(0x80, "");
    const trace whole = run_whole(stream);
    REQUIRE(whole.error == 0);
    REQUIRE(whole.events.size() == 8);
    CHECK(whole.controls == std::vector<std::string>{"ping!"});
    CHECK(whole.data == pattern(300) + pattern(37));
    for (std::size_t cut = 0; cut <= stream.size(); ++cut) {
        const std::string_view s(stream);
        CAPTURE(cut);
        CHECK(run({s.substr(0, cut), s.substr(cut)}) == whole);
    }
}

TEST_CASE("a frame with a 64-bit length split at header offsets parses the same", "[ws][frames]") {
    const std::string payload = pattern(65536 + 9);
    const std::string frame = client_frame(0x82, payload);
    REQUIRE(frame.size() == 14 + payload.size());
    const trace whole = run_whole(frame);
    CHECK(whole.data == payload);
    for (std::size_t cut = 0; cut < 40; ++cut) {
        const std::string_view s(frame);
        CAPTURE(cut);
        CHECK(run({s.substr(0, cut), s.substr(cut)}) == whole);
    }
    for (std::size_t cut = frame.size() - 20; cut <= frame.size(); ++cut) {
        const std::string_view s(frame);
        CAPTURE(cut);
        CHECK(run({s.substr(0, cut), s.substr(cut)}) == whole);
    }
}

TEST_CASE("two frames in one feed are reported in turn with the bytes each consumed",
          "[ws][frames]") {
    const std::string a = client_frame(0x81, "abc");
    const std::string b = client_frame(0x8A, "xy");
    const std::string stream = a + b;
    frame_parser p(1024, false);
    std::string data;
    std::string_view in(stream);
    auto r = p.feed(in, data);
    CHECK((r.what == ev::frame_start && r.consumed == 6));
    in.remove_prefix(r.consumed);
    r = p.feed(in, data);
    CHECK((r.what == ev::frame_end && r.consumed == 3));
    in.remove_prefix(r.consumed);
    r = p.feed(in, data);
    CHECK((r.what == ev::frame_start && r.consumed == 6));
    CHECK(p.header().op == opcode::pong);
    in.remove_prefix(r.consumed);
    r = p.feed(in, data);
    CHECK((r.what == ev::frame_end && r.consumed == 2));
    CHECK(p.control_payload() == "xy");
    CHECK(data == "abc");  // a control payload never goes to data
}

TEST_CASE("payload bytes are appended to what data already holds", "[ws][frames]") {
    const std::string frame = client_frame(0x80, "tail");
    std::string data = "head-";
    const auto t = run_whole(frame);
    frame_parser p(1024, false);
    std::string_view in(frame);
    while (!in.empty()) in.remove_prefix(p.feed(in, data).consumed);
    CHECK(data == "head-tail");
    CHECK(t.data == "tail");
}

TEST_CASE("an unmasked client frame is a protocol error", "[ws][frames]") {
    CHECK(error_of(client_frame(0x81, "hi", false)) == close_code::protocol_error);
    CHECK(error_of(client_frame(0x89, "", false)) == close_code::protocol_error);
}

TEST_CASE("RSV2 or RSV3 set is a protocol error, with or without permessage-deflate",
          "[ws][frames]") {
    for (const bool allowed : {false, true}) {
        CHECK(error_of(client_frame(0xA1, "x"), 1024, allowed) == close_code::protocol_error);
        CHECK(error_of(client_frame(0x91, "x"), 1024, allowed) == close_code::protocol_error);
        CHECK(error_of(client_frame(0xF1, "x"), 1024, allowed) == close_code::protocol_error);
    }
}

TEST_CASE("RSV1 is refused without permessage-deflate and taken on a first data frame with it",
          "[ws][frames]") {
    CHECK(error_of(client_frame(0xC1, "x"), 1024, false) == close_code::protocol_error);
    CHECK(error_of(client_frame(0xC2, "x"), 1024, false) == close_code::protocol_error);
    const auto t = run_whole(client_frame(0xC1, "x"), 1024, true);
    CHECK(t.error == 0);
    REQUIRE(t.headers.size() == 1);
    CHECK(t.headers[0].rsv1);
    CHECK(run_whole(client_frame(0x41, "x"), 1024, true).error == 0);  // first of several
}

TEST_CASE("RSV1 on a control frame or a continuation frame is a protocol error", "[ws][frames]") {
    for (const int op : {0x8, 0x9, 0xA}) {
        CAPTURE(op);
        CHECK(error_of(client_frame(static_cast<std::uint8_t>(0xC0 | op), ""), 1024, true) ==
              close_code::protocol_error);
    }
    CHECK(error_of(client_frame(0xC0, "x"), 1024, true) == close_code::protocol_error);
    CHECK(error_of(client_frame(0x40, "x"), 1024, true) == close_code::protocol_error);
}

TEST_CASE("every reserved opcode is a protocol error", "[ws][frames]") {
    for (const int op : {3, 4, 5, 6, 7, 0xB, 0xC, 0xD, 0xE, 0xF}) {
        CAPTURE(op);
        CHECK(error_of(client_frame(static_cast<std::uint8_t>(0x80 | op), "")) ==
              close_code::protocol_error);
    }
    for (const int op : {0, 1, 2, 8, 9, 0xA}) {
        CAPTURE(op);
        CHECK(error_of(client_frame(static_cast<std::uint8_t>(0x80 | op), "")) == 0);
    }
}

TEST_CASE("a control frame over 125 bytes or without FIN is a protocol error", "[ws][frames]") {
    CHECK(error_of(client_frame(0x89, std::string(125, 'p'))) == 0);
    CHECK(error_of(client_frame(0x89, std::string(126, 'p'))) == close_code::protocol_error);
    CHECK(error_of(client_frame(0x88, std::string(70000, 'p'))) == close_code::protocol_error);
    CHECK(error_of(client_frame(0x09, "p")) == close_code::protocol_error);
    CHECK(error_of(client_frame(0x08, "")) == close_code::protocol_error);
    CHECK(error_of(client_frame(0x0A, "")) == close_code::protocol_error);
    // A control frame is not held to max_payload, which bounds data frames.
    CHECK(error_of(client_frame(0x89, std::string(100, 'p')), 10) == 0);
}

TEST_CASE("the control frame's length rule fails on the second byte, before any more arrive",
          "[ws][frames]") {
    frame_parser p(1024, false);
    std::string data;
    const auto r = p.feed(bytes({0x89, 0xFE}), data);
    CHECK(r.what == ev::error);
    CHECK(p.error_code() == close_code::protocol_error);
}

TEST_CASE("a length not in its shortest form is a protocol error", "[ws][frames]") {
    const auto mask = bytes({1, 2, 3, 4});
    // 16-bit form for 125 and 0 bytes.
    CHECK(error_of(bytes({0x82, 0xFE, 0x00, 0x7D}) + mask + std::string(125, 'x')) ==
          close_code::protocol_error);
    CHECK(error_of(bytes({0x82, 0xFE, 0x00, 0x00}) + mask) == close_code::protocol_error);
    // 64-bit form for 65535 and 126 bytes.
    CHECK(error_of(bytes({0x82, 0xFF, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF}) + mask) ==
          close_code::protocol_error);
    CHECK(error_of(bytes({0x82, 0xFF, 0, 0, 0, 0, 0, 0, 0, 126}) + mask) ==
          close_code::protocol_error);
    // The shortest forms are fine: 126 in 16 bits, 65536 in 64 bits.
    CHECK(error_of(bytes({0x82, 0xFE, 0x00, 0x7E}) + mask + std::string(126, 'x')) == 0);
    CHECK(error_of(bytes({0x82, 0xFF, 0, 0, 0, 0, 0, 1, 0, 0}) + mask + std::string(65536, 'x')) ==
          0);
}

TEST_CASE("a 64-bit length with its most significant bit set is a protocol error", "[ws][frames]") {
    CHECK(error_of(bytes({0x82, 0xFF, 0x80, 0, 0, 0, 0, 0, 0, 0})) == close_code::protocol_error);
    CHECK(error_of(bytes({0x82, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF}),
                   UINT64_MAX) == close_code::protocol_error);
}

TEST_CASE("a data frame over max_payload gets 1009 as soon as its length is read", "[ws][frames]") {
    // Only the header so far: no mask key, no payload.
    frame_parser p(1000, false);
    std::string data;
    auto r = p.feed(bytes({0x82, 0xFE, 0x03, 0xE9}), data);
    CHECK(r.what == ev::error);
    CHECK(r.consumed == 4);
    CHECK(p.error_code() == close_code::too_big);
    CHECK(std::string_view(p.error_reason()).size() > 0);
    CHECK(data.empty());
    // A 64-bit length of 2^62, nothing allocated.
    CHECK(error_of(bytes({0x82, 0xFF, 0x40, 0, 0, 0, 0, 0, 0, 0})) == close_code::too_big);
    // Exactly max_payload is fine; so is a continuation frame's own length under it.
    CHECK(error_of(client_frame(0x82, std::string(1000, 'x')), 1000) == 0);
    CHECK(error_of(client_frame(0x80, std::string(1001, 'x')), 1000) == close_code::too_big);
    CHECK(error_of(client_frame(0x81, "a"), 0) == close_code::too_big);
    CHECK(error_of(client_frame(0x81, ""), 0) == 0);
}

TEST_CASE("after an error the parser stays failed and consumes nothing", "[ws][frames]") {
    frame_parser p(1024, false);
    std::string data;
    auto r = p.feed(client_frame(0x81, "x", false), data);
    REQUIRE(r.what == ev::error);
    const auto code = p.error_code();
    const std::string reason = p.error_reason();
    r = p.feed(client_frame(0x81, "valid"), data);
    CHECK(r.what == ev::error);
    CHECK(r.consumed == 0);
    CHECK(p.error_code() == code);
    CHECK(reason == p.error_reason());
    CHECK(data.empty());
}

TEST_CASE("append_frame writes the shortest length encoding and the FIN and RSV1 bits",
          "[ws][frames]") {
    std::string out;
    append_frame(out, opcode::text, "hi");
    CHECK(out == bytes({0x81, 0x02, 'h', 'i'}));
    out.clear();
    append_frame(out, opcode::binary, "", false, true);
    CHECK(out == bytes({0x42, 0x00}));
    out.clear();
    append_frame(out, opcode::continuation, std::string(125, 'a'));
    CHECK(out.substr(0, 2) == bytes({0x80, 125}));
    CHECK(out.size() == 127);
    out.clear();
    append_frame(out, opcode::text, std::string(126, 'a'));
    CHECK(out.substr(0, 4) == bytes({0x81, 126, 0x00, 126}));
    out.clear();
    append_frame(out, opcode::text, std::string(65535, 'a'));
    CHECK(out.substr(0, 4) == bytes({0x81, 126, 0xFF, 0xFF}));
    CHECK(out.size() == 4 + 65535);
    out.clear();
    append_frame(out, opcode::binary, std::string(65536, 'a'));
    CHECK(out.substr(0, 10) == bytes({0x82, 127, 0, 0, 0, 0, 0, 1, 0, 0}));
    CHECK(out.size() == 10 + 65536);
    out = "kept";
    append_frame(out, opcode::pong, "p");
    CHECK(out == "kept" + bytes({0x8A, 0x01, 'p'}));
}

TEST_CASE("append_close_frame writes the code and reason, or nothing for no_status",
          "[ws][frames]") {
    std::string out;
    append_close_frame(out, close_code::normal, "bye");
    CHECK(out == bytes({0x88, 0x05, 0x03, 0xE8, 'b', 'y', 'e'}));
    out.clear();
    append_close_frame(out, close_code::no_status, "ignored");
    CHECK(out == bytes({0x88, 0x00}));
    out.clear();
    append_close_frame(out, close_code::too_big, "");
    CHECK(out == bytes({0x88, 0x02, 0x03, 0xF1}));
}

TEST_CASE("a long close reason is cut to 123 bytes at a UTF-8 boundary", "[ws][frames]") {
    std::string out;
    append_close_frame(out, close_code::going_away, std::string(300, 'r'));
    REQUIRE(out.size() == 2 + 125);
    CHECK(static_cast<std::uint8_t>(out[1]) == 125);
    CHECK(out.substr(4) == std::string(123, 'r'));

    // 'é' is two bytes: 61 of them fill 122 bytes, the 62nd would pass 123.
    std::string accents;
    for (int i = 0; i < 100; ++i) accents += "\xC3\xA9";
    out.clear();
    append_close_frame(out, close_code::normal, accents);
    CHECK(static_cast<std::uint8_t>(out[1]) == 2 + 122);
    const auto parsed = parse_close_payload(std::string_view(out).substr(2));
    CHECK(parsed.error == 0);
    CHECK(parsed.reason == accents.substr(0, 122));

    // A four-byte character straddling byte 123.
    std::string mixed = std::string(121, 'a') + "\xF0\x9F\x98\x80" + "tail";
    out.clear();
    append_close_frame(out, close_code::normal, mixed);
    CHECK(out.substr(4) == std::string(121, 'a'));
}

TEST_CASE("a close reason that is not UTF-8 is left out", "[ws][frames]") {
    std::string out;
    append_close_frame(out, close_code::normal, "bad \xFF");
    CHECK(out == bytes({0x88, 0x02, 0x03, 0xE8}));
}

TEST_CASE("parse_close_payload reads the code and reason and flags what may not be sent",
          "[ws][frames]") {
    auto c = parse_close_payload("");
    CHECK(c.code == close_code::no_status);
    CHECK(c.error == 0);
    CHECK(c.reason.empty());

    c = parse_close_payload(bytes({0x03}));
    CHECK(c.error == close_code::protocol_error);

    const std::string done = bytes({0x03, 0xE8}) + "done";  // the reason views the payload
    c = parse_close_payload(done);
    CHECK(c.code == 1000);
    CHECK(c.reason == "done");
    CHECK(c.error == 0);

    c = parse_close_payload(bytes({0x0B, 0xB8}));  // 3000
    CHECK(c.code == 3000);
    CHECK(c.error == 0);

    c = parse_close_payload(bytes({0x03, 0xE8}) + "\xCE\xBA\xE1\xBD\xB9\xED\xA0\x80");
    CHECK(c.error == close_code::invalid_payload);

    for (const int code : {0, 999, 1004, 1005, 1006, 1015, 1016, 2000, 2999, 5000, 65535}) {
        CAPTURE(code);
        c = parse_close_payload(bytes({code >> 8, code & 0xFF}));
        CHECK(c.error == close_code::protocol_error);
    }
}

TEST_CASE("is_valid_close_code takes the codes a peer may send", "[ws][frames]") {
    for (int code = 0; code <= 65535; ++code) {
        const bool expected = (code >= 1000 && code <= 1003) || (code >= 1007 && code <= 1014) ||
                              (code >= 3000 && code <= 4999);
        if (is_valid_close_code(static_cast<std::uint16_t>(code)) != expected) {
            FAIL("close code " << code);
        }
    }
}

TEST_CASE("frames written by append_frame and masked read back the same", "[ws][frames]") {
    for (const std::size_t n : {0U, 1U, 125U, 126U, 65535U, 65536U}) {
        const std::string payload = pattern(n);
        std::string server;
        append_frame(server, opcode::binary, payload);
        // Mask it as a client would: set the mask bit and insert the key after the length.
        const std::size_t head = n < 126 ? 2 : n <= 0xFFFF ? 4 : 10;
        CHECK(server.size() == head + n);
        CHECK(client_frame(0x82, payload) == [&] {
            std::string c = server.substr(0, head);
            c[1] = static_cast<char>(c[1] | 0x80);
            for (const auto b : test_mask) c += static_cast<char>(b);
            for (std::size_t i = 0; i < n; ++i) {
                c += static_cast<char>(static_cast<std::uint8_t>(payload[i]) ^ test_mask[i % 4]);
            }
            return c;
        }());
    }
}

}  // namespace unit_test_ws_frames

// The test kit's WebSocket frame codec (src/testing/ws_frames.hpp) and handshake key
// (src/testing/ws_handshake.hpp), transport-free. Its client frames are read back by tern's
// own server-side parser (src/ws/frame.hpp) and tern's server frames by the kit's parser,
// for every length form; the frames a strict client refuses are built byte by byte.

#include <catch2/catch.hpp>
#include <tern/testing.hpp>

#include "testing/ws_frames.hpp"
#include "testing/ws_handshake.hpp"
#include "ws/frame.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace unit_test_testing_ws_frames {

namespace kit = tern::testing::detail;
namespace server = tern::detail::ws;

namespace {

constexpr kit::ws_mask test_mask = {0x12, 0x34, 0x56, 0x78};

// A payload of `n` bytes that is not the same under any shift of the mask.
std::string payload_of(std::size_t n) {
    std::string out(n, '\0');
    for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<char>('a' + (i * 7) % 26);
    return out;
}

// Reads one client frame with tern's server parser: the payload, or a failure.
std::string server_reads(const std::string& frame, server::opcode expected, bool fin = true) {
    server::frame_parser parser(1u << 30, false);
    std::string data;
    auto r = parser.feed(frame, data);
    REQUIRE(r.what == server::frame_parser::event::frame_start);
    CHECK(parser.header().op == expected);
    CHECK(parser.header().fin == fin);
    std::string_view rest = std::string_view(frame).substr(r.consumed);
    r = parser.feed(rest, data);
    REQUIRE(r.what == server::frame_parser::event::frame_end);
    CHECK(r.consumed == rest.size());
    return server::is_control(expected) ? std::string(parser.control_payload()) : data;
}

// The frame as parse_server_frame reads it whole, after checking that every shorter prefix
// is "incomplete".
kit::ws_frame kit_reads(const std::string& bytes) {
    for (std::size_t cut = 0; cut < bytes.size(); cut += 1 + cut / 3) {
        std::size_t used = 0;
        CHECK_FALSE(
            kit::parse_server_frame(std::string_view(bytes).substr(0, cut), used, 1u << 30));
    }
    std::size_t used = 0;
    const auto frame = kit::parse_server_frame(bytes + "next", used, 1u << 30);
    REQUIRE(frame);
    CHECK(used == bytes.size());
    return *frame;
}

std::string refused_reason(const std::string& bytes) {
    std::size_t used = 0;
    try {
        kit::parse_server_frame(bytes, used, 1u << 20);
    } catch (const tern::testing::client_error& e) {
        return e.what();
    }
    return "accepted";
}

}  // namespace

TEST_CASE("kit: client frames of every length form are masked and read back by tern's parser",
          "[kit][ws]") {
    for (const std::size_t n : {0u, 1u, 125u, 126u, 127u, 65535u, 65536u, 100000u}) {
        const std::string payload = payload_of(n);
        std::string frame;
        kit::append_client_frame(frame, kit::ws_opcode::binary, true, payload, test_mask);
        const std::size_t header = n < 126 ? 2 : n <= 65535 ? 4 : 10;
        REQUIRE(frame.size() == header + 4 + n);
        CHECK((static_cast<std::uint8_t>(frame[1]) & 0x80) == 0x80);             // the mask bit
        if (n >= 4) CHECK(frame.substr(header + 4, 4) != payload.substr(0, 4));  // masked
        CHECK(server_reads(frame, server::opcode::binary) == payload);
    }
}

TEST_CASE("kit: fragments and control frames of the client carry FIN and opcode as given",
          "[kit][ws]") {
    std::string first;
    kit::append_client_frame(first, kit::ws_opcode::text, false, "hel", test_mask);
    CHECK(server_reads(first, server::opcode::text, false) == "hel");
    std::string last;
    kit::append_client_frame(last, kit::ws_opcode::continuation, true, "lo", test_mask);
    CHECK(server_reads(last, server::opcode::continuation) == "lo");
    std::string close;
    kit::append_client_frame(close, kit::ws_opcode::close, true, kit::close_payload(4001, "bye"),
                             test_mask);
    const std::string payload = server_reads(close, server::opcode::close);
    const auto parsed = server::parse_close_payload(payload);
    CHECK(parsed.code == 4001);
    CHECK(parsed.reason == "bye");
    CHECK(parsed.error == 0);
}

TEST_CASE("kit: server frames of every length form are read whole and only whole", "[kit][ws]") {
    for (const std::size_t n : {0u, 5u, 125u, 126u, 65535u, 65536u, 70000u}) {
        const std::string payload = payload_of(n);
        std::string bytes;
        server::append_frame(bytes, server::opcode::text, payload, n != 5);
        const kit::ws_frame frame = kit_reads(bytes);
        CHECK(frame.opcode == kit::ws_opcode::text);
        CHECK(frame.fin == (n != 5));
        CHECK(frame.payload == payload);
    }
    std::string close;
    server::append_close_frame(close, 1001, "server stopping");
    const kit::ws_frame frame = kit_reads(close);
    CHECK(frame.opcode == kit::ws_opcode::close);
    const kit::ws_close parsed = kit::parse_close_payload(frame.payload);
    CHECK(parsed.code == 1001);
    CHECK(parsed.reason == "server stopping");
}

TEST_CASE("kit: the server frames a strict client refuses throw client_error", "[kit][ws]") {
    using namespace std::string_literals;
    CHECK_THAT(refused_reason("\xC1\x00"s), Catch::Contains("reserved bit"));  // RSV1
    CHECK_THAT(refused_reason("\xA1\x00"s), Catch::Contains("reserved bit"));  // RSV2
    CHECK_THAT(refused_reason("\x91\x00"s), Catch::Contains("reserved bit"));  // RSV3
    for (const char op : {'\x83', '\x87', '\x8B', '\x8F'}) {
        CHECK_THAT(refused_reason(std::string(1, op) + "\x00"s), Catch::Contains("unknown opcode"));
    }
    CHECK_THAT(refused_reason("\x81\x81\x01\x02\x03\x04x"s), Catch::Contains("masked"));
    CHECK_THAT(refused_reason("\x81\x7E\x00\x05hello"s), Catch::Contains("shortest form"));
    CHECK_THAT(refused_reason("\x82\x7F\x00\x00\x00\x00\x00\x00\xFF\xFF"s),
               Catch::Contains("shortest form"));
    CHECK_THAT(refused_reason("\x82\x7F\x80\x00\x00\x00\x00\x00\x00\x00"s),
               Catch::Contains("top bit"));
    CHECK_THAT(refused_reason("\x82\x7F\x00\x00\x00\x00\x00\x20\x00\x00"s),
               Catch::Contains("over the client's limit"));
    CHECK_THAT(refused_reason("\x09\x00"s), Catch::Contains("fragmented"));  // ping without FIN
    CHECK_THAT(refused_reason("\x89\x7E\x00\x7E"s + std::string(126, 'p')),
               Catch::Contains("over 125 bytes"));
}

TEST_CASE("kit: close payloads: codes, empty, one byte, codes no endpoint sends, bad reasons",
          "[kit][ws]") {
    using namespace std::string_literals;
    CHECK(kit::parse_close_payload("").code == 1005);
    CHECK(kit::parse_close_payload("\x03\xE8"s).code == 1000);
    CHECK(kit::parse_close_payload("\x0F\xA0ok"s).reason == "ok");
    CHECK_THROWS_AS(kit::parse_close_payload("\x03"s), tern::testing::client_error);
    for (const int code : {0, 999, 1004, 1005, 1006, 1015, 1016, 2999, 5000}) {
        CHECK_THROWS_AS(kit::parse_close_payload(kit::close_payload(code, "")),
                        tern::testing::client_error);
    }
    for (const int code : {1000, 1001, 1002, 1003, 1007, 1011, 1014, 3000, 4999}) {
        CHECK(kit::parse_close_payload(kit::close_payload(code, "")).code == code);
    }
    CHECK_THROWS_AS(kit::parse_close_payload("\x03\xE8\xC3"s), tern::testing::client_error);
}

TEST_CASE("kit: UTF-8 as RFC 3629 has it: overlongs, surrogates and truncations are refused",
          "[kit][ws]") {
    using namespace std::string_literals;
    CHECK(kit::valid_utf8(""));
    CHECK(kit::valid_utf8("plain ASCII"));
    CHECK(kit::valid_utf8("\xC3\xA9t\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80 \xF4\x8F\xBF\xBF"s));
    CHECK(kit::valid_utf8("\xED\x9F\xBF\xEE\x80\x80"s));  // U+D7FF, U+E000: around surrogates
    CHECK_FALSE(kit::valid_utf8("\xC0\xAF"s));            // overlong '/'
    CHECK_FALSE(kit::valid_utf8("\xE0\x80\xAF"s));        // overlong, three bytes
    CHECK_FALSE(kit::valid_utf8("\xF0\x80\x80\xAF"s));    // overlong, four bytes
    CHECK_FALSE(kit::valid_utf8("\xED\xA0\x80"s));        // U+D800, a surrogate
    CHECK_FALSE(kit::valid_utf8("\xF4\x90\x80\x80"s));    // past U+10FFFF
    CHECK_FALSE(kit::valid_utf8("\xF5\x80\x80\x80"s));
    CHECK_FALSE(kit::valid_utf8("\xE2\x82"s));  // truncated
    CHECK_FALSE(kit::valid_utf8("\x80"s));      // a lone continuation byte
    CHECK_FALSE(kit::valid_utf8("\xC3\x28"s));  // a bad continuation byte
    CHECK_FALSE(kit::valid_utf8("\xFF"s));
}

TEST_CASE("kit: Sec-WebSocket-Accept is RFC 6455's own example, base64 is RFC 4648's",
          "[kit][ws]") {
    // RFC 6455 section 1.3.
    CHECK(kit::websocket_accept("dGhlIHNhbXBsZSBub25jZQ==") == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=");
    // RFC 4648 section 10.
    CHECK(kit::base64("") == "");
    CHECK(kit::base64("f") == "Zg==");
    CHECK(kit::base64("fo") == "Zm8=");
    CHECK(kit::base64("foo") == "Zm9v");
    CHECK(kit::base64("foobar") == "Zm9vYmFy");
    CHECK(kit::base64(std::string(16, '\0')).size() == 24);  // a Sec-WebSocket-Key's length
}

}  // namespace unit_test_testing_ws_frames

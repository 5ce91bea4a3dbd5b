// The HTTP/2 frame reader (src/h2/frames.hpp, RFC 9113 sections 3.4, 4 and 6): raw bytes
// in, frames or errors out, each rule with the code and the scope it gives.

#include <catch2/catch.hpp>

#include "h2/frames.hpp"
#include "support/h2_frame_bytes.hpp"

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace unit_test_h2_frames_reader {

using namespace test_h2_frame_bytes;
namespace f = tern::h2::frames;
using f::error_code;
using f::read_status;

// Reads `input` whole: every result up to the first need_more or connection error.
std::vector<f::read_result> read_all(f::reader& reader, const bytes& input) {
    std::vector<f::read_result> out;
    std::size_t used = 0;
    for (;;) {
        auto r = reader.next(std::span(input).subspan(used));
        used += r.consumed;
        out.push_back(r);
        if (r.status == read_status::need_more || r.status == read_status::connection_error) {
            return out;
        }
    }
}

// The verdict on the frames after the preface: the last result that is not need_more. Its
// frame views the bytes kept here, valid until the next call.
f::read_result after_preface(const bytes& frames, f::reader_limits limits = {}) {
    static bytes kept;
    kept = join({preface(), frames});
    f::reader reader(limits);
    const auto all = read_all(reader, kept);
    for (auto it = all.rbegin(); it != all.rend(); ++it) {
        if (it->status != read_status::need_more) return *it;
    }
    return all.back();
}

void check_connection_error(const bytes& frames, error_code code) {
    const auto r = after_preface(frames);
    INFO("reason: " << r.error.reason);
    CHECK(r.status == read_status::connection_error);
    CHECK(r.error.code == code);
    CHECK(r.error.connection_error);
}

void check_stream_error(const bytes& frames, error_code code) {
    const auto r = after_preface(frames);
    INFO("reason: " << r.error.reason);
    CHECK(r.status == read_status::stream_error);
    CHECK(r.error.code == code);
    CHECK_FALSE(r.error.connection_error);
}

const bytes block = text("\x82\x86\x84");  // an HPACK block; the reader does not decode it

TEST_CASE("h2 frames: the client preface is checked once, and a wrong byte fails at once",
          "[frames]") {
    f::reader reader;
    const auto p = preface();
    // Part of the preface: nothing yet, nothing consumed.
    auto r = reader.next(std::span(p).first(10));
    CHECK(r.status == read_status::need_more);
    CHECK(r.consumed == 0);
    // The preface and its SETTINGS frame.
    r = reader.next(p);
    REQUIRE(r.status == read_status::frame);
    CHECK(r.consumed == 24 + 9);
    CHECK(r.frame.type() == f::frame_type::settings);
    CHECK(reader.preface_done());

    f::reader other;
    const bytes http1 = text("GET / HTTP/1.1\r\n");
    r = other.next(std::span(http1).first(3));
    CHECK(r.status == read_status::connection_error);
    CHECK(r.error.code == error_code::protocol_error);
    CHECK_FALSE(other.preface_done());  // not HTTP/2: closed without a GOAWAY
    // The error stays.
    CHECK(other.next(preface()).status == read_status::connection_error);
}

TEST_CASE("h2 frames: the preface must be followed by SETTINGS without ACK", "[frames]") {
    const bytes magic = text("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n");
    f::reader a;
    auto r = a.next(join({magic, frame(6, 0, 0, bytes(8))}));
    CHECK(r.status == read_status::connection_error);
    CHECK(r.error.code == error_code::protocol_error);
    f::reader b;
    r = b.next(join({magic, frame(4, f::flag::ack, 0)}));
    CHECK(r.status == read_status::connection_error);
    f::reader c;  // an extension frame first is no SETTINGS either
    r = c.next(join({magic, frame(0x16, 0, 0, bytes(8))}));
    CHECK(r.status == read_status::connection_error);
}

TEST_CASE("h2 frames: a frame over SETTINGS_MAX_FRAME_SIZE is a connection FRAME_SIZE_ERROR",
          "[frames]") {
    check_connection_error(frame(0, 0, 1, bytes(16385)), error_code::frame_size_error);
    check_connection_error(frame(1, f::flag::end_headers, 1, bytes(16385)),
                           error_code::frame_size_error);
    // Found from the 9-byte header alone, before any of the payload arrives.
    f::reader reader;
    auto input = join({preface(), frame(0, 0, 1, bytes(100000))});
    input.resize(preface().size() + 9);
    auto r = reader.next(input);
    REQUIRE(r.status == read_status::frame);  // the SETTINGS
    r = reader.next(std::span(input).subspan(r.consumed));
    CHECK(r.status == read_status::connection_error);
    CHECK(r.error.code == error_code::frame_size_error);
    // 16,384 is allowed; a larger advertised size moves the limit.
    CHECK(after_preface(frame(0, 0, 1, bytes(16384))).status == read_status::frame);
    CHECK(after_preface(frame(0, 0, 1, bytes(20000)), {.max_frame_size = 20000}).status ==
          read_status::frame);
}

TEST_CASE("h2 frames: stream 0 and stream ids where they do not belong", "[frames]") {
    using E = error_code;
    check_connection_error(frame(0, 0, 0, text("test")), E::protocol_error);  // h2spec 6.1/1
    check_connection_error(frame(1, f::flag::end_headers, 0, block), E::protocol_error);  // 6.2/4
    check_connection_error(frame(2, 0, 0, bytes(5)), E::protocol_error);                  // 6.3/1
    check_connection_error(frame(3, 0, 0, u32(8)), E::protocol_error);                    // 6.4/1
    check_connection_error(frame(4, 0, 1), E::protocol_error);                            // 6.5/2
    check_connection_error(frame(6, 0, 1, bytes(8)), E::protocol_error);                  // 6.7/3
    check_connection_error(frame(7, 0, 1, bytes(8)), E::protocol_error);                  // 6.8/1
    check_connection_error(frame(5, f::flag::end_headers, 1, bytes(4)), E::protocol_error);
}

TEST_CASE("h2 frames: padding as long as what it pads is a connection PROTOCOL_ERROR", "[frames]") {
    // h2spec 6.1/3: DATA, length 5, pad length 6.
    check_connection_error(frame(0, f::flag::padded, 1, text("\x06Test")),
                           error_code::protocol_error);
    check_connection_error(frame(0, f::flag::padded, 1, text("\x05Test")),
                           error_code::protocol_error);
    // The pad length byte itself missing.
    check_connection_error(frame(0, f::flag::padded, 1), error_code::protocol_error);
    check_connection_error(frame(1, f::flag::padded | f::flag::end_headers, 1),
                           error_code::protocol_error);
    // h2spec 6.2/3: HEADERS whose padding exceeds the block.
    check_connection_error(
        frame(1, f::flag::padded | f::flag::end_headers, 1, join({{5}, block, bytes(1)})),
        error_code::protocol_error);
    // A HEADERS frame that also depends on itself (a stream error, whose block is still
    // decoded): the padding is judged first, so no fragment is cut past the payload
    // (fuzz_h2_frames found parse_headers reading beyond it).
    check_connection_error(frame(1, f::flag::padded | f::flag::priority | f::flag::end_headers, 1,
                                 join({{200}, u32(1), {15}, block})),
                           error_code::protocol_error);
    // Exactly filling the payload is fine: DATA with 4 bytes of padding and no data.
    const auto r = after_preface(frame(0, f::flag::padded, 1, text("\x04pppp")));
    REQUIRE(r.status == read_status::frame);
    const auto d = f::parse_data(r.frame);
    CHECK(d.data.empty());
    CHECK(d.flow_length == 5);  // the window counts the padding too (6.1)
}

TEST_CASE("h2 frames: PRIORITY of the wrong length or on itself is a stream error", "[frames]") {
    check_stream_error(frame(2, 0, 1, bytes(4)), error_code::frame_size_error);  // h2spec 6.3/2
    check_stream_error(frame(2, 0, 1, bytes(6)), error_code::frame_size_error);
    check_stream_error(frame(2, 0, 3, join({u32(3), {15}})), error_code::protocol_error);
    // h2spec 5.3.1/1: a HEADERS frame depending on itself; the frame is still whole, so its
    // block can be decoded for HPACK's sake.
    const auto r = after_preface(
        frame(1, f::flag::priority | f::flag::end_headers, 3, join({u32(3), {15}, block})));
    CHECK(r.status == read_status::stream_error);
    CHECK(r.error.code == error_code::protocol_error);
    CHECK(f::parse_headers(r.frame).fragment.size() == block.size());
    // The reserved bit of the dependency does not hide it (the exclusive flag).
    check_stream_error(frame(2, 0, 5, join({u32(0x80000005), {15}})), error_code::protocol_error);
}

TEST_CASE("h2 frames: fixed lengths of RST_STREAM, PING, GOAWAY and WINDOW_UPDATE", "[frames]") {
    using E = error_code;
    check_connection_error(frame(3, 0, 1, bytes(3)), E::frame_size_error);  // h2spec 6.4/3
    check_connection_error(frame(3, 0, 1, bytes(5)), E::frame_size_error);
    check_connection_error(frame(6, 0, 0, bytes(6)), E::frame_size_error);  // h2spec 6.7/4
    check_connection_error(frame(7, 0, 0, bytes(7)), E::frame_size_error);
    check_connection_error(frame(8, 0, 0, bytes(3)), E::frame_size_error);  // h2spec 6.9/3
    check_connection_error(frame(8, 0, 1, bytes(5)), E::frame_size_error);
    CHECK(after_preface(frame(7, 0, 0, join({u32(0), u32(0), text("debug")}))).status ==
          read_status::frame);
}

TEST_CASE("h2 frames: SETTINGS' shape and values", "[frames]") {
    using E = error_code;
    check_connection_error(frame(4, f::flag::ack, 0, setting(1, 0)), E::frame_size_error);
    check_connection_error(frame(4, 0, 0, bytes(5)), E::frame_size_error);     // h2spec 6.5/3
    check_connection_error(frame(4, 0, 0, setting(2, 2)), E::protocol_error);  // 6.5.2/1
    check_connection_error(frame(4, 0, 0, setting(4, 0x80000000)), E::flow_control_error);
    check_connection_error(frame(4, 0, 0, setting(5, 16383)), E::protocol_error);  // 6.5.2/3
    check_connection_error(frame(4, 0, 0, setting(5, 16777216)), E::protocol_error);
    // RFC 8441 3 and RFC 9218 2.1: SETTINGS_ENABLE_CONNECT_PROTOCOL (8) and
    // SETTINGS_NO_RFC7540_PRIORITIES (9) are 0 or 1 (nghttp2 refuses other values too).
    check_connection_error(frame(4, 0, 0, setting(8, 2)), E::protocol_error);
    check_connection_error(frame(4, 0, 0, setting(9, 0x04000005)), E::protocol_error);
    // Values are judged in order (6.5.3): a bad one is not excused by a later good one of
    // the same id (nghttp2 keeps only the last, and would take this).
    check_connection_error(frame(4, 0, 0, join({setting(4, 0x910000ff), setting(4, 0)})),
                           E::flow_control_error);
    CHECK(
        after_preface(frame(4, 0, 0, join({setting(8, 1), setting(9, 1), setting(9, 0)}))).status ==
        read_status::frame);
    // In range, unknown ids ignored (h2spec 6.5.2/5).
    const auto r = after_preface(frame(
        4, 0, 0,
        join({setting(2, 1), setting(4, 0x7fffffff), setting(5, 16777215), setting(0xff, 7)})));
    REQUIRE(r.status == read_status::frame);
    const f::settings_payload s(r.frame);
    CHECK_FALSE(s.ack());
    REQUIRE(s.size() == 4);
    std::vector<std::pair<int, std::uint32_t>> seen;
    for (const auto e : s) seen.emplace_back(e.id, e.value);
    CHECK(seen == std::vector<std::pair<int, std::uint32_t>>{
                      {2, 1}, {4, 0x7fffffff}, {5, 16777215}, {0xff, 7}});
}

TEST_CASE("h2 frames: WINDOW_UPDATE of 0 is a stream error on a stream, a connection error on 0",
          "[frames]") {
    check_connection_error(frame(8, 0, 0, u32(0)), error_code::protocol_error);  // h2spec 6.9/1
    check_stream_error(frame(8, 0, 1, u32(0)), error_code::protocol_error);      // h2spec 6.9/2
    // Only 31 bits count.
    check_stream_error(frame(8, 0, 1, u32(0x80000000)), error_code::protocol_error);
    const auto r = after_preface(frame(8, 0, 1, u32(0x80000001)));
    REQUIRE(r.status == read_status::frame);
    CHECK(f::parse_window_update(r.frame) == 1);
}

TEST_CASE("h2 frames: a header block is HEADERS then CONTINUATION on one stream, nothing between",
          "[frames]") {
    using E = error_code;
    const auto headers = frame(1, 0, 1, block);  // no END_HEADERS
    // h2spec 6.2/1: PRIORITY in the middle of a block.
    check_connection_error(join({headers, frame(2, 0, 1, bytes(5))}), E::protocol_error);
    // 6.2/2: HEADERS to another stream.
    check_connection_error(join({headers, frame(1, f::flag::end_headers, 3, block)}),
                           E::protocol_error);
    // 6.10/2: DATA after a CONTINUATION without END_HEADERS.
    check_connection_error(join({headers, frame(9, 0, 1, block), frame(0, 0, 1, text("x"))}),
                           E::protocol_error);
    // 6.10/3: CONTINUATION on stream 0.
    check_connection_error(join({headers, frame(9, f::flag::end_headers, 0, block)}),
                           E::protocol_error);
    // 6.10/4, 6.10/5, 5.1/4: CONTINUATION with no block open.
    check_connection_error(
        join({frame(1, f::flag::end_headers, 1, block), frame(9, f::flag::end_headers, 1, block)}),
        E::protocol_error);
    check_connection_error(frame(9, f::flag::end_headers, 1, block), E::protocol_error);
    // 5.5/2: an extension frame in the middle of a block.
    check_connection_error(join({headers, frame(0x16, 0, 0, bytes(8))}), E::protocol_error);
    // 6.10/1: the fragments arrive one by one, the last with END_HEADERS.
    f::reader reader;
    const auto input = join({preface(), headers, frame(9, 0, 1, text("ab")),
                             frame(9, f::flag::end_headers, 1, text("c"))});
    const auto all = read_all(reader, input);  // the frames view `input`
    REQUIRE(all.size() == 5);
    CHECK(f::parse_headers(all[1].frame).fragment.size() == block.size());
    CHECK_FALSE(f::parse_headers(all[1].frame).end_headers);
    CHECK(reader.continuing_stream() == 0);
    CHECK(f::parse_continuation(all[3].frame).end_headers);
    CHECK(f::parse_continuation(all[3].frame).fragment[0] == 'c');
}

TEST_CASE("h2 frames: a CONTINUATION flood ends the connection with ENHANCE_YOUR_CALM",
          "[frames]") {
    bytes chain = frame(1, 0, 1, block);
    for (int i = 0; i < 8; ++i) chain = join({chain, frame(9, 0, 1, bytes(1))});
    // Eight CONTINUATIONs are allowed: the eighth may end the block.
    CHECK(after_preface(join({chain, frame(9, f::flag::end_headers, 1)}), {.max_continuations = 9})
              .status == read_status::frame);
    const auto r = after_preface(join({chain, frame(9, f::flag::end_headers, 1)}));
    CHECK(r.status == read_status::connection_error);
    CHECK(r.error.code == error_code::enhance_your_calm);
    // The count starts again with each block.
    bytes two = join({frame(1, 0, 1, block), frame(9, f::flag::end_headers, 1),
                      frame(1, 0, 3, block), frame(9, f::flag::end_headers, 3)});
    CHECK(after_preface(two, {.max_continuations = 1}).status == read_status::frame);
}

TEST_CASE("h2 frames: extension frames are skipped, their flags and reserved bits ignored",
          "[frames]") {
    f::reader reader;
    const auto input = join({preface(), frame(0x16, 0xff, 0, bytes(8)), frame(0xfa, 0, 7),
                             frame(6, 0xfe, 0x80000000, text("12345678"))});
    const auto all = read_all(reader, input);
    REQUIRE(all.size() == 3);
    CHECK(all[1].status == read_status::frame);
    CHECK(all[1].frame.type() == f::frame_type::ping);
    CHECK(all[1].frame.header.stream_id == 0);  // the reserved bit cleared (h2spec 4.1/3)
    CHECK(all[1].consumed == 9 + 8 + 9 + 9 + 8);
    CHECK_FALSE(f::parse_ping(all[1].frame).ack);  // 0xfe: no ACK bit
}

TEST_CASE("h2 frames: typed payloads strip padding and priority", "[frames]") {
    const auto h = after_preface(frame(1, f::flag::padded | f::flag::priority | f::flag::end_stream,
                                       5, join({{2}, u32(0x80000003), {200}, block, {0, 0}})));
    REQUIRE(h.status == read_status::frame);
    const auto p = f::parse_headers(h.frame);
    CHECK(p.end_stream);
    CHECK_FALSE(p.end_headers);
    CHECK(p.has_priority);
    CHECK(p.priority.dependency == 3);
    CHECK(p.priority.exclusive);
    CHECK(p.priority.weight == 200);
    CHECK(bytes(p.fragment.begin(), p.fragment.end()) == block);

    const auto d = after_preface(frame(0, f::flag::padded | f::flag::end_stream, 1,
                                       text("\x03"
                                            "abcxyz")));
    REQUIRE(d.status == read_status::frame);
    const auto dp = f::parse_data(d.frame);
    CHECK(std::string(dp.data.begin(), dp.data.end()) == "abc");
    CHECK(dp.flow_length == 7);
    CHECK(dp.end_stream);

    const auto g = after_preface(frame(7, 0, 0, join({u32(0x80000009), u32(0xb), text("why")})));
    const auto gp = f::parse_goaway(g.frame);
    CHECK(gp.last_stream_id == 9);
    CHECK(gp.error_code == 0xb);
    CHECK(std::string(gp.debug_data.begin(), gp.debug_data.end()) == "why");

    const auto rst = after_preface(frame(3, 0, 1, u32(0x1234)));
    CHECK(f::parse_rst_stream(rst.frame) == 0x1234);
    const auto pri = after_preface(frame(2, 0, 1, join({u32(7), {9}})));
    CHECK(f::parse_priority(pri.frame).dependency == 7);
    CHECK(f::parse_priority(pri.frame).weight == 9);
}

TEST_CASE(
    "h2 frames: split at every byte, frames come out the same and nothing partial is consumed",
    "[frames]") {
    const auto input = join(
        {preface(), frame(8, 0, 0, u32(1000)),
         frame(1, f::flag::priority, 1, join({u32(0), {1}, block})), frame(9, 0, 1, text("ab")),
         frame(9, f::flag::end_headers, 1, text("c")), frame(0x20, 0, 1, text("ext")),
         frame(0, f::flag::padded, 1,
               text("\x01"
                    "data!")),
         frame(2, 0, 3, bytes(4)), frame(6, 0, 0, text("pingpong")),
         frame(0, f::flag::end_stream, 1, text("end"))});
    // Read whole.
    f::reader whole;
    auto expected = read_all(whole, input);
    expected.pop_back();  // the final need_more
    REQUIRE(expected.size() == 9);
    CHECK(expected[6].status == read_status::stream_error);  // the short PRIORITY

    // Every way of cutting the input in two, and one byte at a time.
    auto compare = [&](const std::vector<std::size_t>& cuts) {
        f::reader reader;
        std::vector<f::read_result> got;
        std::vector<std::uint8_t> buffer;  // what arrived and was not consumed
        std::size_t fed = 0;
        for (std::size_t cut : cuts) {
            buffer.insert(buffer.end(), input.begin() + static_cast<std::ptrdiff_t>(fed),
                          input.begin() + static_cast<std::ptrdiff_t>(cut));
            fed = cut;
            for (;;) {
                auto r = reader.next(buffer);
                REQUIRE(r.status != read_status::connection_error);
                if (r.status == read_status::need_more) {
                    // Nothing of an incomplete frame is consumed; only whole skipped frames.
                    if (r.consumed != 0) {
                        buffer.erase(buffer.begin(),
                                     buffer.begin() + static_cast<std::ptrdiff_t>(r.consumed));
                    }
                    break;
                }
                got.push_back(r);
                // Copy what the view shows before the buffer moves.
                got.back().frame.payload = {};
                CHECK(bytes(r.frame.payload.begin(), r.frame.payload.end()) ==
                      bytes(expected[got.size() - 1].frame.payload.begin(),
                            expected[got.size() - 1].frame.payload.end()));
                buffer.erase(buffer.begin(),
                             buffer.begin() + static_cast<std::ptrdiff_t>(r.consumed));
            }
        }
        REQUIRE(got.size() == expected.size());
        for (std::size_t i = 0; i < got.size(); ++i) {
            CHECK(got[i].status == expected[i].status);
            CHECK(got[i].frame.header.type == expected[i].frame.header.type);
            CHECK(got[i].frame.header.length == expected[i].frame.header.length);
            CHECK(got[i].frame.header.stream_id == expected[i].frame.header.stream_id);
            CHECK(got[i].frame.header.flags == expected[i].frame.header.flags);
        }
        CHECK(buffer.empty());
    };
    for (std::size_t cut = 0; cut <= input.size(); ++cut) compare({cut, input.size()});
    std::vector<std::size_t> each;
    for (std::size_t i = 1; i <= input.size(); ++i) each.push_back(i);
    compare(each);
}

TEST_CASE("h2 frames: a frame's header is checked as soon as it arrives, whatever the split",
          "[frames]") {
    const auto input = join({preface(), frame(6, 0, 0, bytes(7))});
    for (std::size_t cut = preface().size() + 9; cut <= input.size(); ++cut) {
        f::reader reader;
        auto r = reader.next(std::span(input).first(cut));
        REQUIRE(r.status == read_status::frame);
        r = reader.next(std::span(input).first(cut).subspan(r.consumed));
        CHECK(r.status == read_status::connection_error);
        CHECK(r.error.code == error_code::frame_size_error);
    }
}

}  // namespace unit_test_h2_frames_reader

// The HTTP/2 frame writer (src/h2/frames.hpp): frames appended to one buffer, read back by
// tern's reader and by nghttp2's client session (the oracle), including a header block
// larger than SETTINGS_MAX_FRAME_SIZE split into HEADERS and CONTINUATION in place.

#include <catch2/catch.hpp>

#include "h2/frames.hpp"
#include "support/h2_frame_bytes.hpp"

#include <nghttp2/nghttp2.h>

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace unit_test_h2_frames_writer {

namespace f = tern::h2::frames;
using test_h2_frame_bytes::bytes;

std::span<const std::uint8_t> as_bytes(const std::string& s) {
    return {reinterpret_cast<const std::uint8_t*>(s.data()), s.size()};
}

// Reads `server_bytes` (frames as a client would see them) with tern's reader, after a
// client preface so the reader takes them: every frame, or fails the test on an error.
std::vector<f::read_result> read_back(const std::string& written, std::uint32_t max_frame_size,
                                      std::string& keep) {
    keep = std::string(f::client_preface) + written;
    f::reader reader({.max_frame_size = max_frame_size, .max_continuations = 100000});
    std::vector<f::read_result> out;
    std::size_t used = 0;
    for (;;) {
        auto r = reader.next(as_bytes(keep).subspan(used));
        REQUIRE(r.status != f::read_status::connection_error);
        used += r.consumed;
        if (r.status == f::read_status::need_more) break;
        out.push_back(r);
    }
    CHECK(used == keep.size());
    return out;
}

// What nghttp2's client session reported.
struct client_view {
    std::vector<std::pair<std::string, std::string>> fields;
    std::string data;
    std::vector<int> types;  // frames received, in order
    std::uint32_t rst_code = 0;
    std::int32_t rst_stream = 0;
    std::uint32_t goaway_code = 0;
    std::int32_t goaway_last = 0;
    std::string goaway_debug;
    bool ping_ack = false;
    bool settings_ack = false;
    std::uint32_t server_max_streams = 0;
};

struct client {
    nghttp2_session* session = nullptr;
    client_view seen;

    client() {
        nghttp2_session_callbacks* cb = nullptr;
        REQUIRE(nghttp2_session_callbacks_new(&cb) == 0);
        nghttp2_session_callbacks_set_on_frame_recv_callback(
            cb, [](nghttp2_session*, const nghttp2_frame* frame, void* ud) {
                auto& v = *static_cast<client_view*>(ud);
                v.types.push_back(frame->hd.type);
                switch (frame->hd.type) {
                    case NGHTTP2_RST_STREAM:
                        v.rst_code = frame->rst_stream.error_code;
                        v.rst_stream = frame->hd.stream_id;
                        break;
                    case NGHTTP2_GOAWAY:
                        v.goaway_code = frame->goaway.error_code;
                        v.goaway_last = frame->goaway.last_stream_id;
                        v.goaway_debug.assign(
                            reinterpret_cast<const char*>(frame->goaway.opaque_data),
                            frame->goaway.opaque_data_len);
                        break;
                    case NGHTTP2_PING:
                        v.ping_ack = (frame->hd.flags & NGHTTP2_FLAG_ACK) != 0;
                        break;
                    case NGHTTP2_SETTINGS:
                        if ((frame->hd.flags & NGHTTP2_FLAG_ACK) != 0) v.settings_ack = true;
                        for (std::size_t i = 0; i < frame->settings.niv; ++i) {
                            if (frame->settings.iv[i].settings_id ==
                                NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS) {
                                v.server_max_streams = frame->settings.iv[i].value;
                            }
                        }
                        break;
                    default:
                        break;
                }
                return 0;
            });
        nghttp2_session_callbacks_set_on_header_callback(
            cb, [](nghttp2_session*, const nghttp2_frame*, const std::uint8_t* name,
                   std::size_t namelen, const std::uint8_t* value, std::size_t valuelen,
                   std::uint8_t, void* ud) {
                static_cast<client_view*>(ud)->fields.emplace_back(
                    std::string(reinterpret_cast<const char*>(name), namelen),
                    std::string(reinterpret_cast<const char*>(value), valuelen));
                return 0;
            });
        nghttp2_session_callbacks_set_on_data_chunk_recv_callback(
            cb, [](nghttp2_session*, std::uint8_t, std::int32_t, const std::uint8_t* data,
                   std::size_t len, void* ud) {
                static_cast<client_view*>(ud)->data.append(reinterpret_cast<const char*>(data),
                                                           len);
                return 0;
            });
        REQUIRE(nghttp2_session_client_new(&session, cb, &seen) == 0);
        nghttp2_session_callbacks_del(cb);
        nghttp2_submit_settings(session, NGHTTP2_FLAG_NONE, nullptr, 0);
        // Streams 1 and 3, for the server's frames to land on.
        std::array<nghttp2_nv, 4> request = {{nv(":method", "GET"), nv(":scheme", "https"),
                                              nv(":path", "/"), nv(":authority", "tern.test")}};
        REQUIRE(nghttp2_submit_request(session, nullptr, request.data(), request.size(), nullptr,
                                       nullptr) == 1);
        REQUIRE(nghttp2_submit_request(session, nullptr, request.data(), request.size(), nullptr,
                                       nullptr) == 3);
        drain();
    }
    ~client() { nghttp2_session_del(session); }
    client(const client&) = delete;
    client& operator=(const client&) = delete;

    static nghttp2_nv nv(const char* name, const char* value) {
        return {reinterpret_cast<std::uint8_t*>(const_cast<char*>(name)),
                reinterpret_cast<std::uint8_t*>(const_cast<char*>(value)),
                std::char_traits<char>::length(name), std::char_traits<char>::length(value),
                NGHTTP2_NV_FLAG_NONE};
    }

    void drain() {
        const std::uint8_t* out = nullptr;
        while (nghttp2_session_mem_send(session, &out) > 0) {
        }
    }

    // Feeds the server's bytes: all of them must be taken without error.
    void receive(const std::string& server_bytes) {
        const auto n = nghttp2_session_mem_recv(
            session, reinterpret_cast<const std::uint8_t*>(server_bytes.data()),
            server_bytes.size());
        REQUIRE(n == static_cast<long>(server_bytes.size()));
        drain();
        // nghttp2 would have queued a GOAWAY of its own on a protocol error.
        CHECK(nghttp2_session_want_read(session) != 0);
    }
};

// An HPACK block from nghttp2's own encoder.
std::string hpack(const std::vector<std::pair<std::string, std::string>>& fields) {
    nghttp2_hd_deflater* deflater = nullptr;
    REQUIRE(nghttp2_hd_deflate_new(&deflater, 4096) == 0);
    std::vector<nghttp2_nv> nva;
    for (const auto& [n, v] : fields) {
        nva.push_back({reinterpret_cast<std::uint8_t*>(const_cast<char*>(n.data())),
                       reinterpret_cast<std::uint8_t*>(const_cast<char*>(v.data())), n.size(),
                       v.size(), NGHTTP2_NV_FLAG_NONE});
    }
    std::string out(nghttp2_hd_deflate_bound(deflater, nva.data(), nva.size()), '\0');
    const auto n = nghttp2_hd_deflate_hd(deflater, reinterpret_cast<std::uint8_t*>(out.data()),
                                         out.size(), nva.data(), nva.size());
    nghttp2_hd_deflate_del(deflater);
    REQUIRE(n > 0);
    out.resize(static_cast<std::size_t>(n));
    return out;
}

// Field values that Huffman coding hardly shortens.
std::string varied(std::size_t n, unsigned seed) {
    std::string s(n, ' ');
    for (std::size_t i = 0; i < n; ++i) {
        seed = seed * 1103515245U + 12345U;
        s[i] = static_cast<char>('!' + (seed >> 16) % 94);
    }
    return s;
}

TEST_CASE("h2 frames writer: control frames read back by tern's reader and by nghttp2",
          "[frames]") {
    std::string out;
    const std::array<f::setting_entry, 3> settings = {{{f::setting_id::max_concurrent_streams, 100},
                                                       {f::setting_id::max_header_list_size, 16384},
                                                       {f::setting_id::header_table_size, 4096}}};
    f::write_settings(out, settings);
    f::write_settings_ack(out);
    const std::array<std::uint8_t, 8> opaque = {'t', 'e', 'r', 'n', 'p', 'i', 'n', 'g'};
    f::write_ping(out, opaque, true);
    f::write_window_update(out, 0, 1 << 20);
    f::write_window_update(out, 3, 12345);
    f::write_rst_stream(out, 3, f::error_code::cancel);
    f::write_goaway(out, 1, f::error_code::enhance_your_calm, "calm down");

    std::string keep;
    const auto frames = read_back(out, f::default_max_frame_size, keep);
    REQUIRE(frames.size() == 7);
    const f::settings_payload s(frames[0].frame);
    REQUIRE(s.size() == 3);
    CHECK((*s.begin()).id == 3);
    CHECK((*s.begin()).value == 100);
    CHECK(f::settings_payload(frames[1].frame).ack());
    CHECK(f::parse_ping(frames[2].frame).ack);
    CHECK(f::parse_ping(frames[2].frame).opaque[7] == 'g');
    CHECK(f::parse_window_update(frames[3].frame) == (1U << 20));
    CHECK(frames[4].frame.header.stream_id == 3);
    CHECK(f::parse_rst_stream(frames[5].frame) == 0x8);
    const auto g = f::parse_goaway(frames[6].frame);
    CHECK(g.last_stream_id == 1);
    CHECK(g.error_code == 0xb);
    CHECK(g.debug_data.size() == 9);

    client c;
    c.receive(out);
    CHECK(c.seen.server_max_streams == 100);
    CHECK(c.seen.settings_ack);
    CHECK(c.seen.ping_ack);
    CHECK(c.seen.rst_stream == 3);
    CHECK(c.seen.rst_code == NGHTTP2_CANCEL);
    CHECK(c.seen.goaway_last == 1);
    CHECK(c.seen.goaway_code == NGHTTP2_ENHANCE_YOUR_CALM);
    CHECK(c.seen.goaway_debug == "calm down");
}

TEST_CASE(
    "h2 frames writer: a header block over max_frame_size becomes HEADERS + CONTINUATIONs "
    "that nghttp2 decodes",
    "[frames]") {
    const std::vector<std::pair<std::string, std::string>> fields = {{":status", "200"},
                                                                     {"content-type", "text/plain"},
                                                                     {"x-one", varied(15000, 1)},
                                                                     {"x-two", varied(15000, 2)},
                                                                     {"x-three", varied(15000, 3)}};
    const std::string block = hpack(fields);
    REQUIRE(block.size() > 2 * f::default_max_frame_size);

    std::string out;
    f::write_settings(out, {});
    const std::size_t start = f::begin_headers(out);
    out += block;
    f::end_headers(out, start, 1, false, f::default_max_frame_size);
    f::write_data(out, 1, std::string_view("hello, "), false);
    // A DATA frame's header, its payload appended by the caller (as from a file).
    f::write_data_header(out, 1, 5, true);
    out += "world";

    std::string keep;
    const auto frames = read_back(out, f::default_max_frame_size, keep);
    REQUIRE(frames.size() == 1 + 3 + 2);
    CHECK(frames[1].frame.type() == f::frame_type::headers);
    CHECK(frames[1].frame.header.length == f::default_max_frame_size);
    CHECK_FALSE(f::parse_headers(frames[1].frame).end_headers);
    CHECK(frames[2].frame.type() == f::frame_type::continuation);
    CHECK_FALSE(f::parse_continuation(frames[2].frame).end_headers);
    CHECK(f::parse_continuation(frames[3].frame).end_headers);
    std::string joined;
    for (int i = 1; i <= 3; ++i) {
        const auto& p = frames[static_cast<std::size_t>(i)].frame;
        const auto frag = i == 1 ? f::parse_headers(p).fragment : f::parse_continuation(p).fragment;
        joined.append(reinterpret_cast<const char*>(frag.data()), frag.size());
    }
    CHECK(joined == block);
    CHECK(f::parse_data(frames[5].frame).end_stream);

    client c;
    c.receive(out);
    CHECK(c.seen.fields == fields);
    CHECK(c.seen.data == "hello, world");
}

TEST_CASE("h2 frames writer: splitting at every size around the frame limit", "[frames]") {
    for (const std::uint32_t max : {1U, 7U, 16U}) {
        for (std::size_t size = 0; size <= 4 * max + 1; ++size) {
            std::string block(size, '\0');
            for (std::size_t i = 0; i < size; ++i) block[i] = static_cast<char>(i * 7 + 1);
            std::string out;
            f::write_settings(out, {});  // an earlier frame in the same buffer stays as it is
            const std::size_t start = f::begin_headers(out);
            out += block;
            f::end_headers(out, start, 5, true, max);
            std::string keep;
            const auto frames = read_back(out, f::default_max_frame_size, keep);
            const std::size_t pieces = size == 0 ? 1 : (size + max - 1) / max;
            REQUIRE(frames.size() == 1 + pieces);
            CHECK(f::parse_headers(frames[1].frame).end_stream);
            std::string joined;
            for (std::size_t i = 1; i < frames.size(); ++i) {
                const auto& p = frames[i].frame;
                CHECK(p.header.stream_id == 5);
                CHECK(p.header.length <= max);
                const bool last = i + 1 == frames.size();
                const auto frag =
                    i == 1 ? f::parse_headers(p).fragment : f::parse_continuation(p).fragment;
                CHECK(p.has(f::flag::end_headers) == last);
                joined.append(reinterpret_cast<const char*>(frag.data()), frag.size());
            }
            CHECK(joined == block);
        }
    }
}

}  // namespace unit_test_h2_frames_writer

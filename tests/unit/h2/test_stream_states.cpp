// The HTTP/2 stream state machine (src/h2/stream_states.hpp, RFC 9113 5.1): what each frame
// does on a stream in each state, h2spec's section 5.1 cases among them, and a memory that
// stays bounded however many streams a client opens.

#include <catch2/catch.hpp>

#include "h2/frames.hpp"
#include "h2/stream_states.hpp"
#include "support/h2_frame_bytes.hpp"

#include <cstdint>
#include <span>
#include <vector>

namespace unit_test_h2_stream_states {

using namespace test_h2_frame_bytes;
namespace f = tern::h2::frames;
using tern::h2::stream_states;
using action = stream_states::action;
using state = stream_states::state;
using f::error_code;

constexpr std::uint8_t data = 0, headers = 1, priority = 2, rst = 3, window = 8, cont = 9;
constexpr std::uint8_t es = f::flag::end_stream, eh = f::flag::end_headers;

// A frame the reader yielded, by its header alone.
stream_states::verdict on(stream_states& s, std::uint8_t type, std::uint8_t flags,
                          std::uint32_t id) {
    f::read_result r;
    r.status = f::read_status::frame;
    r.frame.header = {0, type, flags, id};
    return s.on_frame(r);
}

// A frame the reader yielded with a stream error of its own.
stream_states::verdict on_bad(stream_states& s, std::uint8_t type, std::uint32_t id,
                              error_code code) {
    f::read_result r;
    r.status = f::read_status::stream_error;
    r.frame.header = {0, type, 0, id};
    r.error = {code, false, "test"};
    return s.on_frame(r);
}

bool is(const stream_states::verdict& v, action what, error_code code = error_code::no_error) {
    return v.what == what && v.code == code;
}

TEST_CASE("h2 streams: idle takes only HEADERS and PRIORITY (h2spec 5.1/1-4)", "[frames]") {
    stream_states s(100, 8);
    CHECK(is(on(s, data, es, 1), action::connection_error, error_code::protocol_error));
    CHECK(is(on(s, rst, 0, 1), action::connection_error, error_code::protocol_error));
    CHECK(is(on(s, window, 0, 1), action::connection_error, error_code::protocol_error));
    // (5.1/4, CONTINUATION on an idle stream, is the reader's: no block open.)
    CHECK(is(on(s, priority, 0, 1), action::accept));
    CHECK(s.state_of(1) == state::idle);  // PRIORITY does not open it
    CHECK(is(on(s, headers, eh, 1), action::accept));
    CHECK(s.state_of(1) == state::open);
    // A malformed PRIORITY on an idle stream cannot be answered with RST_STREAM.
    CHECK(is(on_bad(s, priority, 9, error_code::frame_size_error), action::connection_error,
             error_code::frame_size_error));
}

TEST_CASE("h2 streams: stream ids climb and are odd (h2spec 5.1.1/1-2)", "[frames]") {
    stream_states even(100, 8);
    CHECK(is(on(even, headers, eh | es, 2), action::connection_error, error_code::protocol_error));
    stream_states s(100, 8);
    CHECK(is(on(s, headers, eh | es, 5), action::accept));
    CHECK(s.highest() == 5);
    // A lower id that was never opened is closed (5.1.1): its HEADERS ends the connection.
    CHECK(s.state_of(3) == state::closed);
    CHECK(on(s, headers, eh | es, 3).what == action::connection_error);
    CHECK(s.state_of(7) == state::idle);
    CHECK(s.state_of(4) == state::idle);
}

TEST_CASE(
    "h2 streams: half-closed (remote) answers DATA and HEADERS with STREAM_CLOSED "
    "(h2spec 5.1/5-7, 6.1/2)",
    "[frames]") {
    stream_states s(100, 8);
    CHECK(is(on(s, headers, eh | es, 1), action::accept));
    CHECK(s.state_of(1) == state::half_closed_remote);
    CHECK(is(on(s, window, 0, 1), action::accept));
    CHECK(is(on(s, priority, 0, 1), action::accept));
    CHECK(is(on(s, data, es, 1), action::stream_error, error_code::stream_closed));
    // tern reset it: what the client sent before it saw the reset is ignored.
    CHECK(s.state_of(1) == state::closed);
    CHECK(s.recently_reset(1));
    CHECK(is(on(s, data, es, 1), action::ignore));
    CHECK(is(on(s, headers, eh | es, 1), action::ignore));

    CHECK(is(on(s, headers, eh | es, 3), action::accept));
    CHECK(is(on(s, headers, eh | es, 3), action::stream_error, error_code::stream_closed));
    // 5.1/7: the CONTINUATION of a block whose HEADERS was refused shares its fate.
    CHECK(is(on(s, headers, eh | es, 5), action::accept));
    CHECK(is(on(s, headers, es, 5), action::stream_error, error_code::stream_closed));
    CHECK(is(on(s, cont, eh, 5), action::ignore));
}

TEST_CASE(
    "h2 streams: a stream the client reset, then DATA or HEADERS on it, is STREAM_CLOSED "
    "(h2spec 5.1/8-10)",
    "[frames]") {
    stream_states s(100, 8);
    CHECK(is(on(s, headers, eh, 1), action::accept));
    CHECK(is(on(s, rst, 0, 1), action::accept));
    CHECK(s.state_of(1) == state::closed);
    CHECK_FALSE(s.recently_reset(1));  // the client's reset, not tern's
    CHECK(is(on(s, data, es, 1), action::connection_error, error_code::stream_closed));
    stream_states t(100, 8);
    on(t, headers, eh, 1);
    on(t, rst, 0, 1);
    CHECK(is(on(t, headers, eh | es, 1), action::connection_error, error_code::stream_closed));
    // The frames a client may still send on a closed stream are passed over.
    CHECK(is(on(t, priority, 0, 1), action::ignore));
    CHECK(is(on(t, window, 0, 1), action::ignore));
    CHECK(is(on(t, rst, 0, 1), action::ignore));
}

TEST_CASE(
    "h2 streams: a stream both sides ended is closed: DATA and HEADERS are a connection "
    "STREAM_CLOSED (h2spec 5.1/11-13)",
    "[frames]") {
    stream_states s(100, 8);
    CHECK(is(on(s, headers, eh | es, 1), action::accept));
    s.on_end_stream_sent(1);  // the response's END_STREAM
    CHECK(s.state_of(1) == state::closed);
    CHECK(s.active() == 0);
    CHECK(is(on(s, data, es, 1), action::connection_error, error_code::stream_closed));
    CHECK(is(on(s, headers, eh | es, 1), action::connection_error, error_code::stream_closed));
    // The WINDOW_UPDATE or RST_STREAM sent before the client saw the END_STREAM.
    CHECK(is(on(s, window, 0, 1), action::ignore));
    CHECK(is(on(s, rst, 0, 1), action::ignore));
    // A reader's stream error on a closed stream has nowhere to go either.
    CHECK(is(on_bad(s, window, 1, error_code::protocol_error), action::ignore));
}

TEST_CASE("h2 streams: half-closed (local) takes the rest of the request", "[frames]") {
    stream_states s(100, 8);
    CHECK(is(on(s, headers, eh, 1), action::accept));
    s.on_end_stream_sent(1);  // answered before the body ended
    CHECK(s.state_of(1) == state::half_closed_local);
    CHECK(is(on(s, data, 0, 1), action::accept));
    CHECK(is(on(s, headers, eh | es, 1), action::accept));  // trailers end it
    CHECK(s.state_of(1) == state::closed);
    // An early answer usually resets the client's side (RFC 9113 8.1): late DATA ignored.
    CHECK(is(on(s, headers, eh, 3), action::accept));
    s.on_end_stream_sent(3);
    s.on_reset_sent(3);
    CHECK(is(on(s, data, 0, 3), action::ignore));
}

TEST_CASE("h2 streams: trailers must end the stream (RFC 9113 8.1)", "[frames]") {
    stream_states s(100, 8);
    CHECK(is(on(s, headers, eh, 1), action::accept));
    CHECK(is(on(s, data, 0, 1), action::accept));
    CHECK(is(on(s, headers, eh, 1), action::stream_error, error_code::protocol_error));
    CHECK(is(on(s, headers, eh, 3), action::accept));
    CHECK(is(on(s, headers, es, 3), action::accept));  // trailers in two frames
    CHECK(is(on(s, cont, eh, 3), action::accept));
    CHECK(s.state_of(3) == state::half_closed_remote);
}

TEST_CASE("h2 streams: reader stream errors on open streams reset them", "[frames]") {
    stream_states s(100, 8);
    on(s, headers, eh, 1);
    CHECK(is(on_bad(s, window, 1, error_code::protocol_error), action::stream_error,
             error_code::protocol_error));  // h2spec 6.9/2
    CHECK(s.recently_reset(1));
    // A HEADERS that depends on itself (h2spec 5.3.1/1): the stream opens and is reset.
    CHECK(is(on_bad(s, headers, 3, error_code::protocol_error), action::stream_error,
             error_code::protocol_error));
    CHECK(s.highest() == 3);
    CHECK(s.state_of(3) == state::closed);
}

TEST_CASE("h2 streams: over SETTINGS_MAX_CONCURRENT_STREAMS is REFUSED_STREAM (h2spec 5.1.2/1)",
          "[frames]") {
    stream_states s(2, 8);
    CHECK(is(on(s, headers, eh, 1), action::accept));
    CHECK(is(on(s, headers, eh | es, 3), action::accept));
    CHECK(is(on(s, headers, eh, 5), action::stream_error, error_code::refused_stream));
    CHECK(is(on(s, data, es, 5), action::ignore));  // sent before the refusal arrived
    CHECK(s.active() == 2);
    s.on_end_stream_sent(3);
    CHECK(is(on(s, headers, eh, 7), action::accept));
}

TEST_CASE("h2 streams: after tern's GOAWAY, new streams are ignored", "[frames]") {
    stream_states s(100, 8);
    on(s, headers, eh, 1);
    s.on_goaway_sent(1);
    CHECK(is(on(s, headers, eh, 3), action::ignore));
    CHECK(is(on(s, cont, eh, 3), action::ignore));
    CHECK(is(on(s, data, es, 3), action::ignore));
    CHECK(is(on(s, data, es, 1), action::accept));  // the streams in flight finish
}

TEST_CASE("h2 streams: tern's resets are remembered for a bounded number of streams", "[frames]") {
    stream_states s(100, 4);
    for (std::uint32_t id = 1; id <= 11; id += 2) {
        on(s, headers, eh, id);
        s.on_reset_sent(id);
    }
    // The last four are ignored; older ones are closed streams like any other.
    CHECK(is(on(s, data, 0, 11), action::ignore));
    CHECK(is(on(s, data, 0, 5), action::ignore));
    CHECK(is(on(s, data, 0, 3), action::connection_error, error_code::stream_closed));
}

TEST_CASE("h2 streams: 100,000 streams opened and closed leave the memory where it was",
          "[frames]") {
    stream_states s(100, 128);
    std::size_t memory_after_first = 0;
    std::uint32_t id = 1;
    for (int n = 0; n < 100000; ++n, id += 2) {
        REQUIRE(on(s, headers, eh | (n % 2 == 0 ? es : 0), id).what == action::accept);
        switch (n % 3) {
            case 0:  // answered
                if (n % 2 != 0) REQUIRE(on(s, data, es, id).what == action::accept);
                s.on_end_stream_sent(id);
                break;
            case 1:  // tern resets it
                s.on_reset_sent(id);
                break;
            default:  // the client resets it
                REQUIRE(on(s, rst, 0, id).what == action::accept);
                break;
        }
        if (n == 1000) memory_after_first = s.memory();
    }
    CHECK(s.active() == 0);
    CHECK(s.memory() == memory_after_first);
    CHECK(s.memory() < 4096);
    CHECK(s.state_of(1) == state::closed);
    CHECK(s.state_of(id) == state::idle);
    CHECK(is(on(s, data, 0, 1), action::connection_error, error_code::stream_closed));
}

TEST_CASE("h2 streams: a hundred open streams ended in any order keep each one's own state",
          "[frames]") {
    // The active streams are looked up by a search that relies on their id order: end them
    // out of order (as responses finish) and check every id's state against a plain model.
    stream_states s(100, 8);
    std::vector<state> model(2 * 300 + 2, state::idle);
    std::uint32_t next = 1;
    auto open = [&] {
        REQUIRE(on(s, headers, eh, next).what == action::accept);
        model[next] = state::open;
        next += 2;
    };
    for (int i = 0; i < 100; ++i) open();
    // A fixed scramble: ids 1..199 visited with a stride that is prime to 100.
    for (int round = 0; round < 3; ++round) {
        for (std::uint32_t k = 0; k < 100; ++k) {
            const std::uint32_t id = 2 * ((k * 37 + static_cast<std::uint32_t>(round) * 11) % 100) +
                                     1 + 200 * static_cast<std::uint32_t>(round);
            if (id >= next || model[id] == state::closed) continue;
            if (model[id] == state::open && k % 3 == 0) {
                REQUIRE(on(s, data, es, id).what == action::accept);  // the client's end
                model[id] = state::half_closed_remote;
            } else if (model[id] == state::half_closed_remote || k % 3 == 1) {
                s.on_end_stream_sent(id);
                model[id] = model[id] == state::half_closed_remote ? state::closed
                                                                   : state::half_closed_local;
            } else {
                REQUIRE(on(s, rst, 0, id).what == action::accept);  // the client resets it
                model[id] = state::closed;
            }
            for (std::uint32_t x = 1; x < next; x += 2) REQUIRE(s.state_of(x) == model[x]);
        }
        // Close what is left of this round's hundred, then open the next hundred.
        for (std::uint32_t x = 1; x < next; x += 2) {
            if (model[x] != state::closed) {
                s.on_reset_sent(x);
                model[x] = state::closed;
            }
        }
        CHECK(s.active() == 0);
        if (round < 2) {
            for (int i = 0; i < 100; ++i) open();
        }
    }
    CHECK(s.state_of(next) == state::idle);
}

// Raw bytes through the reader and the state machine together, as the connection will use
// them: the h2spec cases the issue names.
std::vector<stream_states::verdict> run(const bytes& frames) {
    const auto input = join({preface(), frames});
    f::reader reader;
    stream_states s(100, 8);
    std::vector<stream_states::verdict> out;
    std::size_t used = 0;
    for (;;) {
        const auto r = reader.next(std::span(input).subspan(used));
        used += r.consumed;
        if (r.status == f::read_status::need_more) break;
        if (r.status == f::read_status::connection_error) {
            out.push_back({action::connection_error, r.error.code, r.error.reason});
            break;
        }
        out.push_back(s.on_frame(r));
        // The connection answers a request that ended at once.
        if (r.frame.type() == f::frame_type::headers && r.frame.has(es) &&
            out.back().what == action::accept) {
            s.on_end_stream_sent(r.frame.header.stream_id);
        }
    }
    return out;
}

TEST_CASE("h2 streams: the h2spec cases of issue 51 from raw bytes", "[frames]") {
    const bytes block = text("\x82\x86\x84");
    const auto request = frame(headers, eh | es, 1, block);
    const auto post = frame(headers, eh, 1, block);
    // 5.1/11 and 6.1/2: DATA on a stream the request ended and the server answered.
    auto v = run(join({request, frame(data, es, 1, text("test"))}));
    REQUIRE(v.size() == 3);
    CHECK(is(v[2], action::connection_error, error_code::stream_closed));
    // 5.1/8: DATA after the client's RST_STREAM.
    v = run(join({post, frame(rst, 0, 1, u32(8)), frame(data, es, 1, text("test"))}));
    REQUIRE(v.size() == 4);
    CHECK(is(v[3], action::connection_error, error_code::stream_closed));
    // 5.1/12: HEADERS on a closed stream.
    v = run(join({request, request}));
    CHECK(is(v.back(), action::connection_error, error_code::stream_closed));
    // 5.1/13: CONTINUATION on a closed stream: no block open, PROTOCOL_ERROR.
    v = run(join({request, frame(cont, eh, 1, block)}));
    CHECK(is(v.back(), action::connection_error, error_code::protocol_error));
}

}  // namespace unit_test_h2_stream_states

// libFuzzer harness of the HTTP/3 connection (src/h3): nghttp3's callbacks into tern's
// streams, the field mapping and limits, bodies, refusals, answers now and later. nghttp3's
// own client sets up the connection first (its control and QPACK streams, a request) through
// the in-memory rig of the unit tests (tests/support/h3_rig.hpp); then the input is a peer's
// stream bytes, in records: a byte whose low 3 bits pick the stream (request streams 0, 4, 8,
// 12, the client's control stream 2 and QPACK streams 6 and 10, a new unidirectional stream
// 14) and whose bit 3 ends it, a length byte, that many bytes. After each record both sides
// are pumped and what was posted runs, as the event loop would; then, when the first byte's
// bit 4 is set, the peer cancels the stream (RESET_STREAM and STOP_SENDING: the rapid-reset
// budget) and QUIC closes it (its place given back now or once its held work ends), and when
// bit 5 is set, 10 s pass (the deadlines and the send rate, h3_connection::check). A record
// the connection refuses ends the input (the QUIC connection would close).

#include "http/exchange_port.hpp"
#include "http/request_handler.hpp"
#include "support/h3_rig.hpp"

#include <tern/config.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace {

using namespace tern::detail;
using tern_test::empty_state;

// A held answer's link: told when the stream closes, after which the port is not touched.
class link final : public held_link {
public:
    void abandon() noexcept override { abandoned = true; }
    bool abandoned = false;
};

// Answers by path: "/hold" on the next turn (through the port, unless the stream closed
// meanwhile), a POST with its body's size, anything else with its path; 4 KiB answers for
// "/big".
class answerer final : public request_handler {
public:
    std::vector<std::function<void()>> later;
    std::size_t body_limit(const request& /*head*/) const noexcept override { return 256; }
    std::unique_ptr<loop_state> make_loop_state() override {
        return std::make_unique<empty_state>();
    }
    void handle(request& req, response& res, std::string_view /*ip*/, answer_later& port,
                loop_state& /*state*/) noexcept override {
        res.content_type = "text/plain";
        if (req.path == "/hold") {
            auto held = std::make_shared<link>();
            port.hold(held);
            later.emplace_back([&port, held] {
                if (held->abandoned) return;
                response r;
                r.body = "held";
                port.finish(std::move(r));
            });
            return;
        }
        res.body = req.path == "/big" ? std::string(4096, 'b')
                                      : std::string(req.method) + " " + std::string(req.path) +
                                            " " + std::to_string(req.body_view().size());
    }
    void handle_failure(request& /*req*/, int status, std::string_view /*message*/, response& res,
                        std::string_view /*ip*/, loop_state& /*state*/) noexcept override {
        res.status = status;
        res.body = "refused";
    }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    answerer app;
    tern::config settings;
    settings.limits.max_header_count = 16;
    settings.limits.max_header_size = 1024;
    settings.limits.max_line_size = 256;
    // Past 64 bytes of bodies in memory, streams' windows are held back (body_memory.hpp).
    settings.http3.max_body_memory = 64;
    parser_limits limits;
    limits.max_header_count = 16;
    limits.max_header_size = 1024;
    limits.max_line_size = 256;
    limits.max_body_size = 256;
    limits.planner = &app;
    tern_test::h3_rig rig(app, settings, limits);
    rig.request({{":method", "GET"}, {":scheme", "https"}, {":authority", "f"}, {":path", "/"}});
    if (!rig.pump()) return 0;
    static constexpr std::int64_t streams[] = {0, 4, 8, 12, 2, 6, 10, 14};
    std::size_t at = 0;
    auto now = std::chrono::steady_clock::now();
    while (at + 2 <= size) {
        const std::uint8_t pick = data[at];
        const std::size_t length = data[at + 1];
        at += 2;
        const std::size_t n = std::min(length, size - at);
        const std::string_view bytes(reinterpret_cast<const char*>(data + at), n);
        at += n;
        const auto id = streams[pick & 7];
        if (!rig.feed(id, bytes, (pick & 8) != 0)) return 0;
        for (auto& fn : std::exchange(app.later, {})) fn();
        if (!rig.pump()) return 0;
        if ((pick & 0x10) != 0 && id % 4 == 0) {
            if (!rig.server->on_stream_reset(id)) return 0;
            rig.server->on_stream_close(id, 0x10c);  // H3_REQUEST_CANCELLED
            if (!rig.pump()) return 0;
        }
        if ((pick & 0x20) != 0) {
            now += std::chrono::seconds(10);
            rig.server->check(now);
            if (!rig.pump()) return 0;
        }
    }
    return 0;
}

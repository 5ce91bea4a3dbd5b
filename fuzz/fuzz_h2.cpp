// libFuzzer harness of the HTTP/2 connection (src/h2): tern's frame reader, stream states and
// HPACK decoder into its streams, the field mapping and limits, the flood buckets, bodies, refusals
// and responses. The input is a client's bytes after the preface (the harness sends the preface, so
// the fuzzer works on frames): byte 0 sets the size of each read (1..256), the rest is read in
// pieces of that size; after each piece the connection's output is pulled, and a handler that
// holds its answer is answered on the next turn, as the event loop would. At the end the
// server stops (GOAWAY), the deadlines are checked and the connection closes.
//
// Checks, beyond the sanitizers: what the connection sends parses as frames (a 9-byte header
// and its length) after the server's SETTINGS, and nothing is pulled after it ended.

#include "h2/connection.hpp"
#include "http/exchange_port.hpp"
#include "http/request_handler.hpp"
#include "support/fake_h2_host.hpp"
#include "support/fake_loop.hpp"

#include <tern/config.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

namespace {

using namespace tern::detail;

void check(bool ok) {
    if (!ok) std::abort();
}

using tern_test::fake_loop;  // functions posted run when the harness says

using tern_test::empty_state;
using tern_test::fake_h2_host;
using tern_test::idle_port;

// A held response's link: told when the stream can no longer be answered.
struct link_flag final : held_link {
    bool gone = false;
    void abandon() noexcept override { gone = true; }
};

// Answers by path: "/hold" later (through the port), "/defer" like a blocking handler, a
// POST with its body's size, anything else with its path.
class router final : public request_handler {
public:
    explicit router(fake_loop& loop) : loop_(loop) {}
    std::size_t body_limit(const request& /*head*/) const noexcept override { return 4096; }
    std::unique_ptr<loop_state> make_loop_state() override {
        return std::make_unique<empty_state>();
    }
    void handle(request& req, response& res, std::string_view /*ip*/, answer_later& later,
                loop_state& /*state*/) noexcept override {
        if (req.path == "/hold") {
            auto link = std::make_shared<link_flag>();
            later.hold(link);
            loop_.post([link, &later] {
                if (link->gone) return;  // the stream is closed: `later` may be gone
                response r;
                r.body = "held";
                later.finish(std::move(r));
            });
            return;
        }
        if (req.path == "/defer") {
            auto resume = later.defer([] { return std::function<void()>{}; });
            loop_.post([resume, &res] { resume([&res] { res.body = "deferred"; }); });
            return;
        }
        res.content_type = "text/plain";
        res.body =
            req.method == "POST" ? std::to_string(req.body_view().size()) : std::string(req.target);
        if (req.path == "/big") res.body.assign(100'000, 'b');
        res.fields.emplace_back("Connection", "close");  // left out over HTTP/2
    }
    void handle_failure(request& /*req*/, int status, std::string_view /*message*/, response& res,
                        std::string_view /*ip*/, loop_state& /*state*/) noexcept override {
        res.status = status;
        res.body = "refused";
    }

private:
    fake_loop& loop_;
};

// Small limits, so the fuzzer reaches them: 20 fields, 1 KiB of header, 8 streams, every
// body in memory (spool_body_above 0), 64 bytes of bodies in memory before windows are held
// back (http/body_memory.hpp).
tern::config fuzz_settings() {
    tern::config c;
    c.limits.max_header_count = 20;
    c.limits.max_header_size = 1024;
    c.limits.max_line_size = 512;
    c.http2.max_concurrent_streams = 8;
    c.spool.body_above = 0;
    c.http2.max_body_memory = 64;
    return c;
}

parser_limits fuzz_limits() {
    parser_limits l;
    l.max_body_size = 4096;
    return l;
}

// Walks the frames in `out` from `at`; returns where the next (incomplete) frame begins.
std::size_t walk_frames(const std::string& out, std::size_t at) {
    while (out.size() - at >= 9) {
        const auto* p = reinterpret_cast<const unsigned char*>(out.data() + at);
        const std::size_t length = (std::size_t{p[0]} << 16) | (std::size_t{p[1]} << 8) | p[2];
        check(length <= 16384);  // tern never raises SETTINGS_MAX_FRAME_SIZE for its peer
        if (out.size() - at < 9 + length) break;
        at += 9 + length;
    }
    return at;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size < 1) return 0;
    const std::size_t piece = std::size_t{data[0]} + 1;
    std::string_view input(reinterpret_cast<const char*>(data) + 1, size - 1);

    auto loop = std::make_shared<fake_loop>();
    router handler(*loop);
    fake_h2_host h(*loop, handler, fuzz_settings(), fuzz_limits());
    auto p = std::make_shared<idle_port>();
    auto connection = make_h2_connection(h, h2_peer{"127.0.0.1", false, {}});
    connection->attach(loop, p);

    std::string out;
    std::size_t parsed = 0;
    bool ended = false;
    auto turn = [&] {
        loop->run();
        if (ended) return;
        const auto status = connection->pull(out, 1 << 20);
        parsed = walk_frames(out, parsed);
        if (out.size() > (1 << 20)) {
            check(parsed <= out.size());
            out.erase(0, parsed);
            parsed = 0;
        }
        ended = status != pull_status::more;
    };

    bool reading = connection->receive(h2_preface);
    turn();
    // The server's first frame is its SETTINGS.
    check(out.size() >= 9 && out[3] == '\x04');
    while (reading && !input.empty() && !ended) {
        const auto n = std::min(piece, input.size());
        reading = connection->receive(input.substr(0, n));
        input.remove_prefix(n);
        turn();
    }
    connection->on_idle();
    turn();
    connection->end_on_stop();
    turn();
    turn();
    connection->closed();
    loop->run();
    return 0;
}

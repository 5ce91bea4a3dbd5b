// The HTTP/3 connection (src/h3) without QUIC: nghttp3's own client exchanges stream bytes
// with it in memory (tests/support/h3_rig.hpp). The mapping (pseudo-fields to tern's request,
// tern's response to fields, bodies both ways), the limits docs/http3.md lists, answers
// completed later, and hostile stream bytes: refused on their stream, or the connection
// given up, never a crash.

#include "http/exchange_port.hpp"
#include "http/request_handler.hpp"
#include "support/h3_rig.hpp"

#include <tern/config.hpp>

#include <catch2/catch.hpp>

#include <chrono>

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace unit_test_h3_connection {

using namespace tern::detail;
using tern_test::empty_state;
using tern_test::h3_rig;

namespace {

using fields = std::vector<std::pair<std::string, std::string>>;

fields get(std::string path, fields more = {}) {
    fields f{{":method", "GET"},
             {":scheme", "https"},
             {":authority", "example.test"},
             {":path", std::move(path)}};
    for (auto& m : more) f.push_back(std::move(m));
    return f;
}

// Answers "seen <method> <target> <version> host=<Host> body=<body>"; "/later" is answered
// from a posted function (as a timer or another thread would), "/big" with 1 MB.
// A held answer's link, kept by the application (a test) after the client left.
class kept_link final : public held_link {
public:
    void abandon() noexcept override { abandoned = true; }
    bool abandoned = false;
};

class answerer final : public request_handler {
public:
    std::function<void()> later;
    std::vector<std::shared_ptr<kept_link>> held;  // "/held": its links, until let go
    std::vector<std::string> seen;                 // each answer's body, in order
    std::size_t body_limit(const request& /*head*/) const noexcept override { return 64; }
    std::unique_ptr<loop_state> make_loop_state() override {
        return std::make_unique<empty_state>();
    }
    void handle(request& req, response& res, std::string_view /*ip*/, answer_later& port,
                loop_state& /*state*/) noexcept override {
        res.content_type = "text/plain";
        if (req.path == "/big") {
            res.body.assign(1'000'000, 'x');
            return;
        }
        if (req.path == "/held") {
            held.push_back(std::make_shared<kept_link>());
            port.hold(held.back());
            return;
        }
        const auto host = req.header("host");
        res.body = "seen " + std::string(req.method) + " " + std::string(req.target) + " " +
                   std::to_string(req.version_major) + " host=" + std::string(host ? *host : "") +
                   " body=" + std::string(req.body_view()) + (req.secure ? " secure" : "");
        seen.push_back(res.body);
        if (req.path == "/later") {
            port.hold(nullptr);
            later = [&port, text = res.body] {
                response r;
                r.content_type = "text/plain";
                r.body = "later: " + text;
                port.finish(std::move(r));
            };
        }
    }
    void handle_failure(request& /*req*/, int status, std::string_view /*message*/, response& res,
                        std::string_view /*ip*/, loop_state& /*state*/) noexcept override {
        res.status = status;
        res.content_type = "text/plain";
        res.body = "refused";
        seen.push_back("refused " + std::to_string(status));
    }
};

tern::config small_limits() {
    tern::config c;
    c.limits.max_header_count = 8;
    c.limits.max_header_size = 512;
    c.limits.max_line_size = 128;
    return c;
}

parser_limits parser_limits_of(const tern::config& c, const body_planner& planner) {
    parser_limits l;
    l.max_header_count = c.limits.max_header_count;
    l.max_header_size = c.limits.max_header_size;
    l.max_line_size = c.limits.max_line_size;
    l.max_body_size = 64;
    l.planner = &planner;
    return l;
}

struct rig_with_app {
    answerer app;
    tern::config settings = small_limits();
    parser_limits limits = parser_limits_of(settings, app);
    h3_rig rig{app, settings, limits};
};

}  // namespace

TEST_CASE("h3 connection: a GET is answered with its fields mapped, as HTTP/3.0 over TLS", "[h3]") {
    rig_with_app r;
    REQUIRE(r.rig.control.wakes >= 1);  // the control and QPACK streams are waiting
    const auto id = r.rig.request(get("/a?b=c"));
    REQUIRE(r.rig.pump());
    const auto& a = r.rig.answers[id];
    CHECK(a.ended);
    CHECK(a.field(":status") == "200");
    CHECK(a.field("content-type") == "text/plain");
    CHECK(a.body == "seen GET /a?b=c 3 host=example.test body= secure");
    CHECK(a.field("content-length") == std::to_string(a.body.size()));
    CHECK(r.app.seen.size() == 1);
}

TEST_CASE("h3 connection: a POST body arrives whole, and one over the limit is refused 413",
          "[h3]") {
    rig_with_app r;
    const auto ok = r.rig.request(
        {{":method", "POST"}, {":scheme", "https"}, {":authority", "h"}, {":path", "/p"}},
        "hello body");
    const auto big = r.rig.request(
        {{":method", "POST"}, {":scheme", "https"}, {":authority", "h"}, {":path", "/p"}},
        std::string(100, 'b'));
    REQUIRE(r.rig.pump());
    CHECK(r.rig.answers[ok].body == "seen POST /p 3 host=h body=hello body secure");
    CHECK(r.rig.answers[big].field(":status") == "413");
}

TEST_CASE("h3 connection: too many fields get 431, a long :path 414, a bad Host 400", "[h3]") {
    rig_with_app r;
    fields many;
    for (int i = 0; i < 12; ++i) many.emplace_back("x-f" + std::to_string(i), "v");
    const auto a = r.rig.request(get("/many", many));
    const auto b = r.rig.request(get("/" + std::string(200, 'p')));
    const auto c = r.rig.request(get("/h", {{"host", "other.test"}}));
    const auto d = r.rig.request(get("/after"));
    REQUIRE(r.rig.pump());
    CHECK(r.rig.answers[a].field(":status") == "431");
    CHECK(r.rig.answers[b].field(":status") == "414");
    CHECK(r.rig.answers[c].field(":status") == "400");
    // The refusals were each on their own stream: the connection goes on.
    CHECK(r.rig.answers[d].field(":status") == "200");
}

TEST_CASE("h3 connection: an answer completed later goes out while other streams are answered",
          "[h3]") {
    rig_with_app r;
    const auto held = r.rig.request(get("/later"));
    const auto other = r.rig.request(get("/now"));
    REQUIRE(r.rig.pump());
    CHECK_FALSE(r.rig.answers[held].ended);
    CHECK(r.rig.answers[other].ended);
    // Each handler ran once: nghttp3 reports the end of a bodyless request twice
    // (end_headers with fin, then end_stream), and a held request was once run again on
    // the second, its first link then outliving the stream.
    CHECK(r.app.seen.size() == 2);
    REQUIRE(r.app.later);
    const int wakes = r.rig.control.wakes;
    r.app.later();
    CHECK(r.rig.control.wakes > wakes);  // the QUIC connection is told to write
    REQUIRE(r.rig.pump());
    CHECK(r.rig.answers[held].ended);
    CHECK(r.rig.answers[held].body.starts_with("later: seen GET /later"));
}

TEST_CASE("h3 connection: a 1 MB answer arrives whole through the acknowledgements", "[h3]") {
    rig_with_app r;
    const auto id = r.rig.request(get("/big"));
    REQUIRE(r.rig.pump());
    CHECK(r.rig.answers[id].ended);
    CHECK(r.rig.answers[id].body == std::string(1'000'000, 'x'));
}

TEST_CASE("h3 connection: a body that stops coming is answered 408 after timeouts.body_idle",
          "[h3]") {
    rig_with_app r;
    const auto id = r.rig.request_open(
        {{":method", "POST"}, {":scheme", "https"}, {":authority", "h"}, {":path", "/p"}}, "part");
    REQUIRE(r.rig.pump());
    const auto now = std::chrono::steady_clock::now();
    r.rig.server->check(now);
    REQUIRE(r.rig.pump());
    CHECK(r.rig.answers[id].field(":status").empty());  // not yet
    r.rig.server->check(now + r.settings.timeouts.body_idle + std::chrono::seconds(1));
    REQUIRE(r.rig.pump());
    CHECK(r.rig.answers[id].field(":status") == "408");
}

TEST_CASE(
    "h3 connection: an answer the client acknowledges nothing of is reset after "
    "timeouts.write",
    "[h3]") {
    rig_with_app r;
    r.rig.acks = false;
    const auto id = r.rig.request(get("/big"));
    REQUIRE(r.rig.pump());
    const auto now = std::chrono::steady_clock::now();
    r.rig.server->check(now);
    CHECK(r.rig.control.resets.empty());
    r.rig.server->check(now + r.settings.timeouts.write + std::chrono::seconds(1));
    REQUIRE(r.rig.control.resets.size() == 1);
    CHECK(r.rig.control.resets[0].first == id);
    // Once: the next check does not reset it again.
    r.rig.server->check(now + 2 * r.settings.timeouts.write);
    CHECK(r.rig.control.resets.size() == 1);
}

TEST_CASE(
    "h3 connection: an answer acknowledged in a trickle is reset (H3_REQUEST_CANCELLED) once "
    "timeouts.write passes with less than http3.min_send_progress acknowledged",
    "[h3]") {
    rig_with_app r;
    r.rig.acks = false;
    const auto id = r.rig.request(get("/big"));
    REQUIRE(r.rig.pump());
    const auto now = std::chrono::steady_clock::now();
    const auto write = std::chrono::duration_cast<std::chrono::seconds>(r.settings.timeouts.write);
    // 500 bytes a second: progress at every check ("any progress" never reset it), and
    // less than 16 KiB per timeouts.write (20 s).
    for (std::int64_t second = 1; second <= write.count() - 2; ++second) {
        REQUIRE(r.rig.server->on_acked(id, 500));
        r.rig.server->check(now + std::chrono::seconds(second));
    }
    CHECK(r.rig.control.resets.empty());
    REQUIRE(r.rig.server->on_acked(id, 500));
    r.rig.server->check(now + write + std::chrono::seconds(1));
    REQUIRE(r.rig.control.resets.size() == 1);
    CHECK(r.rig.control.resets[0] == std::pair<std::int64_t, std::uint64_t>(id, 0x10c));
}

TEST_CASE("h3 connection: an answer acknowledged at http3.min_send_progress is not reset", "[h3]") {
    rig_with_app r;
    r.rig.acks = false;
    const auto id = r.rig.request(get("/big"));
    REQUIRE(r.rig.pump());
    const auto now = std::chrono::steady_clock::now();
    const auto write = r.settings.timeouts.write;
    for (int window = 1; window <= 5; ++window) {
        // The stream's bytes: its body's and, the first time, its HEADERS frame's.
        REQUIRE(r.rig.server->on_acked(id, r.settings.http3.min_send_progress + 1000));
        r.rig.server->check(now + window * write);
    }
    CHECK(r.rig.control.resets.empty());
}

TEST_CASE(
    "h3 connection: cancelled request streams past the rapid-reset budget end the connection "
    "with H3_EXCESSIVE_LOAD",
    "[h3]") {
    rig_with_app r;
    REQUIRE(r.rig.pump());
    // http3.max_concurrent_streams is 100: 200 at once. RESET_STREAM and STOP_SENDING of one
    // stream count once.
    std::int64_t id = 0;
    for (; id < 4 * 200; id += 4) {
        REQUIRE(r.rig.server->on_stream_reset(id));
        REQUIRE(r.rig.server->on_stream_reset(id));
    }
    // A stream the server cancelled first (it asked the client to stop sending): the
    // client's RESET_STREAM in answer is not its own cancellation.
    r.rig.server->stop_reading(id, 0x100);
    CHECK(r.rig.server->on_stream_reset(id));
    // Unidirectional streams are not requests.
    CHECK(r.rig.server->on_stream_reset(2));
    CHECK(r.rig.server->failure() == 0);
    // One more request cancelled is one too many.
    CHECK_FALSE(r.rig.server->on_stream_reset(id + 4));
    CHECK(r.rig.server->failure() == 0x107);
}

TEST_CASE(
    "h3 connection: a closed request stream's place is given back at once, or once the held "
    "work the client cancelled has been let go",
    "[h3]") {
    rig_with_app r;
    const auto plain = r.rig.request(get("/now"));
    const auto held = r.rig.request(get("/held"));
    REQUIRE(r.rig.pump());
    // The answered stream was closed by the rig: its place came back.
    CHECK(r.rig.control.released == std::vector<std::int64_t>{plain});
    REQUIRE(r.app.held.size() == 1);

    // The client cancels the held request: the stream closes, its work goes on.
    CHECK(r.rig.server->on_stream_reset(held));
    r.rig.server->on_stream_close(held, 0x10c);
    CHECK(r.app.held.front()->abandoned);
    const auto now = std::chrono::steady_clock::now();
    r.rig.server->check(now);
    CHECK(r.rig.control.released.size() == 1);

    // The application lets go of it: the place comes back (at the next look), once.
    r.app.held.clear();
    r.rig.server->check(now + std::chrono::seconds(1));
    CHECK(r.rig.control.released == std::vector<std::int64_t>{plain, held});
    r.rig.server->check(now + std::chrono::seconds(2));
    CHECK(r.rig.control.released.size() == 2);
}

TEST_CASE(
    "h3 connection: a request with trailers is answered once (fuzz_h3 found a second "
    "head read)",
    "[h3]") {
    rig_with_app r;
    REQUIRE(r.rig.pump());
    // HEADERS (GET, https, /, :authority f) then HEADERS as trailers (x-t: 1), QPACK
    // literals and static-table indices only, and the stream's end.
    const std::string head(
        "\x01\x08\x00\x00\xd1\xd7\xc1\x50\x01"
        "f",
        10);
    const std::string trailers(
        "\x01\x08\x00\x00\x23"
        "x-t\x01"
        "1",
        10);
    // (On stream 0, which the rig's nghttp3 client did not open itself: what the server
    // answers is seen through the handler, not the client.)
    REQUIRE(r.rig.feed(0, head + trailers, true));
    REQUIRE(r.rig.pump());
    CHECK(r.app.seen == std::vector<std::string>{"seen GET / 3 host=f body= secure"});
}

TEST_CASE("h3 connection: hostile stream bytes end the connection without a crash", "[h3]") {
    SECTION("an HTTP/2 frame type (PRIORITY, 0x2) on a request stream") {
        rig_with_app r;
        REQUIRE(r.rig.pump());
        const std::string frame("\x02\x01\x00", 3);
        CHECK_FALSE(r.rig.feed(0, frame, false));
    }
    SECTION("a second control stream from the client") {
        rig_with_app r;
        REQUIRE(r.rig.pump());
        const std::string control_type("\x00\x04\x00", 3);  // type 0 (control), empty SETTINGS
        CHECK_FALSE(r.rig.feed(14, control_type, false));
    }
    SECTION("a DATA frame before any HEADERS") {
        rig_with_app r;
        REQUIRE(r.rig.pump());
        const std::string data(
            "\x00\x03"
            "abc",
            5);
        CHECK_FALSE(r.rig.feed(0, data, true));
    }
    SECTION("QPACK encoder instructions into a dynamic table of capacity 0") {
        rig_with_app r;
        REQUIRE(r.rig.pump());
        // Set Dynamic Table Capacity 4096 on the client's encoder stream (6): the server
        // allowed none (docs/http3.md), so no instruction can make it hold state.
        const std::string capacity("\x3f\xe1\x1f", 3);
        CHECK_FALSE(r.rig.feed(6, capacity, false));
    }
    SECTION("a frame length past the end of the stream") {
        rig_with_app r;
        REQUIRE(r.rig.pump());
        const std::string cut(
            "\x01\x40\xff"
            "ab",
            5);  // HEADERS of 255 bytes, 2 given, FIN
        CHECK_FALSE(r.rig.feed(0, cut, true));
    }
}

}  // namespace unit_test_h3_connection

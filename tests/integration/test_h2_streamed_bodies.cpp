// Request bodies read as they arrive (tern::streamed_body) over HTTP/2, with raw frames over
// loopback (h2c with prior knowledge): the handler runs on the head, each next() hands what
// arrived, and the stream's flow-control window comes back only when the reader asks again,
// so a reader that does not ask closes the client's window. An early answer ends with
// RST_STREAM(NO_ERROR) after the complete response (RFC 9113 8.1); a reset, a body over the
// limit, an idle client and the stop's end each end the reading with their reason.

#include <catch2/catch.hpp>

#include "support/eventually.hpp"
#include "support/fnv.hpp"
#include "support/h2_frame_bytes.hpp"
#include "support/loopback_socket.hpp"
#include "support/streamed_routes.hpp"
#include "support/test_server.hpp"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <thread>

namespace wire_test_h2_streamed_bodies {

using namespace tern_test;
using namespace std::chrono_literals;
namespace fb = test_h2_frame_bytes;

namespace {

using tern_test::fnv_digest;

constexpr std::uint8_t data_type = 0x0;
constexpr std::uint8_t headers_type = 0x1;
constexpr std::uint8_t rst_type = 0x3;
constexpr std::uint8_t settings_type = 0x4;
constexpr std::uint8_t goaway_type = 0x7;
constexpr std::uint8_t window_update_type = 0x8;
constexpr std::uint8_t end_stream = 0x1;
constexpr std::uint8_t end_headers = 0x4;
constexpr std::int64_t initial_window = 65535;
constexpr std::size_t max_frame = 16384;

using seen = tern_test::body_seen;

void routes(tern::app& app, seen& s) {
    constexpr std::size_t big = std::size_t{1} << 30;
    tern_test::add_sum_route(app, s);
    app.post("/cb",
             tern::body_limit(
                 big, tern::streamed_body([](tern::context& ctx) {
                     auto reply = ctx.defer();
                     auto body = std::make_shared<tern::body_reader>(ctx.body_reader());
                     auto digest = std::make_shared<fnv_digest>();
                     auto total = std::make_shared<std::uint64_t>(0);
                     auto step = std::make_shared<tern::body_reader::piece_fn>();
                     *step = [reply, body, digest, total, step](
                                 std::optional<std::string_view> piece, std::error_code ec) {
                         if (ec || !piece) {
                             reply.complete([ec, n = *total, h = digest->h](tern::context& c) {
                                 if (ec) {
                                     c.status(500).text(ec.message());
                                 } else {
                                     c.text("callback bytes=" + std::to_string(n) +
                                            " hash=" + std::to_string(h));
                                 }
                             });
                             *step = nullptr;  // the cycle ends
                             return;
                         }
                         digest->update(*piece);
                         *total += piece->size();
                         body->next(*step);
                     };
                     body->next(*step);
                 })));
    app.post("/refuse", tern::streamed_body([](tern::context& ctx) -> tern::task {
                 ctx.status(401).text("no");
                 co_return;
             }));
    app.post("/wait", tern::streamed_body([&s](tern::context& ctx) -> tern::task {
                 while (!s.release) co_await tern::sleep_for(5ms);
                 tern::body_reader body = ctx.body_reader();
                 std::uint64_t n = 0;
                 while (auto piece = co_await body.next()) n += piece->size();
                 ctx.text("waited bytes=" + std::to_string(n));
             }));
    tern_test::add_watch_route(app, s);
    app.post("/slow",
             tern::body_limit(big, tern::streamed_body([&s](tern::context& ctx) -> tern::task {
                                  tern::body_reader body = ctx.body_reader();
                                  std::uint64_t n = 0;
                                  if (auto piece = co_await body.next()) n += piece->size();
                                  s.bytes = n;
                                  s.asked = true;
                                  while (!s.release) co_await tern::sleep_for(5ms);
                                  while (auto piece = co_await body.next()) n += piece->size();
                                  ctx.text("slow bytes=" + std::to_string(n));
                              })));
    app.get("/after", [](tern::context& ctx) { ctx.text("after"); });
}

// An HPACK literal field without indexing, its name new (RFC 7541 6.2.2), no Huffman; both
// strings shorter than 127 bytes.
void literal(fb::bytes& out, std::string_view name, std::string_view value) {
    out.push_back(0x00);
    out.push_back(static_cast<std::uint8_t>(name.size()));
    out.insert(out.end(), name.begin(), name.end());
    out.push_back(static_cast<std::uint8_t>(value.size()));
    out.insert(out.end(), value.begin(), value.end());
}

// What came back on one stream.
struct stream_seen {
    std::vector<int> statuses;  // each HEADERS frame's :status (0: trailers or unknown)
    std::string body;
    bool ended = false;
    std::optional<std::uint32_t> reset;         // the server's RST_STREAM code
    std::int64_t send_window = initial_window;  // what the client may still send on it
};

// An h2c connection of raw frames with prior knowledge, blocking with poll(2) deadlines.
class h2_raw {
public:
    explicit h2_raw(std::uint16_t port) : fd_(tern_test::connect_loopback(port)) {
        REQUIRE(fd_ != platform::invalid_socket);
        send(fb::preface());
    }
    ~h2_raw() { close(); }
    h2_raw(const h2_raw&) = delete;
    h2_raw& operator=(const h2_raw&) = delete;

    void close() {
        if (fd_ != platform::invalid_socket) platform::close_socket(fd_);
        fd_ = platform::invalid_socket;
    }

    void send(const fb::bytes& b) {
        std::size_t at = 0;
        while (at < b.size()) {
            const auto n =
                platform::send_bytes(fd_, b.data() + at, b.size() - at, platform::no_signal);
            REQUIRE(n > 0);
            at += static_cast<std::size_t>(n);
        }
    }

    // HEADERS for POST `path` (END_STREAM when `ends`), with `extra` fields.
    void post(std::uint32_t id, std::string_view path,
              std::initializer_list<std::pair<std::string_view, std::string_view>> extra = {},
              bool ends = false) {
        fb::bytes block;
        literal(block, ":method", ends ? "GET" : "POST");
        literal(block, ":scheme", "http");
        literal(block, ":path", path);
        literal(block, ":authority", "localhost");
        for (const auto& [n, v] : extra) literal(block, n, v);
        send(fb::frame(headers_type, end_headers | (ends ? end_stream : 0), id, block));
        streams[id];
    }
    void get(std::uint32_t id, std::string_view path) { post(id, path, {}, true); }

    void trailers(std::uint32_t id, std::string_view name, std::string_view value) {
        fb::bytes block;
        literal(block, name, value);
        send(fb::frame(headers_type, end_headers | end_stream, id, block));
    }

    void reset(std::uint32_t id, std::uint32_t code) {
        send(fb::frame(rst_type, 0, id, fb::u32(code)));
    }

    // Sends `body` on stream `id` as DATA frames within the flow-control windows, reading
    // what comes meanwhile; END_STREAM on the last when `ends`. Returns the bytes sent: all
    // of them, or those sent before the windows stayed shut for `patience`.
    std::size_t send_body(std::uint32_t id, std::string_view body, bool ends,
                          std::chrono::milliseconds patience = 5s) {
        std::size_t at = 0;
        auto& s = streams[id];
        while (at < body.size() || (ends && body.empty() && at == 0)) {
            const std::int64_t window = std::min(connection_window, s.send_window);
            if (window <= 0) {
                if (!read_frames(patience)) return at;  // stalled
                continue;
            }
            const auto n = static_cast<std::size_t>(
                std::min<std::int64_t>({window, static_cast<std::int64_t>(max_frame),
                                        static_cast<std::int64_t>(body.size() - at)}));
            const bool last = ends && at + n == body.size();
            send(fb::frame(data_type, last ? end_stream : 0, id, fb::text(body.substr(at, n))));
            at += n;
            s.send_window -= static_cast<std::int64_t>(n);
            connection_window -= static_cast<std::int64_t>(n);
            if (body.empty()) break;
            read_frames(0ms);
        }
        return at;
    }

    // Reads frames for up to `wait` (0: what is there now). False when nothing came.
    bool read_frames(std::chrono::milliseconds wait) {
        bool any = false;
        for (;;) {
            if (platform::wait_socket(fd_, false, any ? 0 : static_cast<int>(wait.count())) <= 0) {
                return any;
            }
            char buf[65536];
            const auto n = platform::receive_bytes(fd_, buf, sizeof buf, 0);
            if (n <= 0) {
                peer_closed = true;
                return any;
            }
            any = true;
            in_.append(buf, static_cast<std::size_t>(n));
            take_frames();
        }
    }

    // Reads until `done()` holds or `limit` passes.
    template <class F>
    bool read_until(F done, std::chrono::milliseconds limit = 10s) {
        const auto until = std::chrono::steady_clock::now() + limit;
        while (!done()) {
            if (peer_closed || std::chrono::steady_clock::now() >= until) return done();
            read_frames(50ms);
        }
        return true;
    }

    std::map<std::uint32_t, stream_seen> streams;
    std::int64_t connection_window = initial_window;
    bool peer_closed = false;
    std::optional<std::uint32_t> goaway;
    int window_updates = 0;  // stream WINDOW_UPDATEs received

private:
    static int status_of(std::string_view block) {
        // Dynamic table size updates first (RFC 7541 6.3: 001xxxxx, a 5-bit prefix integer).
        while (!block.empty() && (static_cast<std::uint8_t>(block[0]) & 0xe0) == 0x20) {
            const bool more = (static_cast<std::uint8_t>(block[0]) & 0x1f) == 0x1f;
            block.remove_prefix(1);
            while (more && !block.empty()) {
                const bool last = (static_cast<std::uint8_t>(block[0]) & 0x80) == 0;
                block.remove_prefix(1);
                if (last) break;
            }
        }
        if (block.empty()) return 0;
        const auto first = static_cast<std::uint8_t>(block[0]);
        static constexpr int indexed[] = {200, 204, 206, 304, 400, 404, 500};
        if (first >= 0x88 && first <= 0x8e) return indexed[first - 0x88];
        // A literal named by index 8 (:status), three digits without Huffman.
        if ((first == 0x08 || first == 0x48 || first == 0x18) && block.size() >= 5 &&
            block[1] == 3) {
            return std::stoi(std::string(block.substr(2, 3)));
        }
        return 0;
    }

    void take_frames() {
        while (in_.size() >= 9) {
            const auto* b = reinterpret_cast<const std::uint8_t*>(in_.data());
            const std::size_t len = (std::size_t{b[0]} << 16) | (std::size_t{b[1]} << 8) | b[2];
            if (in_.size() < 9 + len) return;
            const std::uint8_t type = b[3];
            const std::uint8_t flags = b[4];
            const std::uint32_t id = ((std::uint32_t{b[5]} << 24) | (std::uint32_t{b[6]} << 16) |
                                      (std::uint32_t{b[7]} << 8) | b[8]) &
                                     0x7fffffff;
            const std::string_view payload(in_.data() + 9, len);
            const auto u32 = [&](std::size_t at) {
                const auto* p = reinterpret_cast<const std::uint8_t*>(payload.data() + at);
                return (std::uint32_t{p[0]} << 24) | (std::uint32_t{p[1]} << 16) |
                       (std::uint32_t{p[2]} << 8) | p[3];
            };
            switch (type) {
                case data_type:
                    streams[id].body.append(payload);
                    if ((flags & end_stream) != 0) streams[id].ended = true;
                    break;
                case headers_type:
                    streams[id].statuses.push_back(status_of(payload));
                    if ((flags & end_stream) != 0) streams[id].ended = true;
                    break;
                case rst_type:
                    streams[id].reset = u32(0);
                    break;
                case settings_type:
                    if ((flags & 0x1) == 0) send(fb::frame(settings_type, 0x1, 0));
                    break;
                case goaway_type:
                    goaway = u32(4);
                    break;
                case window_update_type:
                    if (id == 0) {
                        connection_window += u32(0) & 0x7fffffff;
                    } else {
                        streams[id].send_window += u32(0) & 0x7fffffff;
                        ++window_updates;
                    }
                    break;
                default:
                    break;
            }
            in_.erase(0, 9 + len);
        }
    }

    platform::native_socket fd_;
    std::string in_;
};

std::string pattern(std::size_t n) {
    std::string s(n, '\0');
    for (std::size_t i = 0; i < n; ++i) s[i] = static_cast<char>(i * 7 % 251);
    return s;
}

std::string sum_of(std::string_view body, std::string_view trailer = "-") {
    fnv_digest d;
    d.update(body);
    return "bytes=" + std::to_string(body.size()) + " hash=" + std::to_string(d.h) +
           " trailer=" + std::string(trailer);
}

// A later stream on the same connection is answered.
void next_stream_is_served(h2_raw& c, std::uint32_t id) {
    c.get(id, "/after");
    REQUIRE(c.read_until([&] { return c.streams[id].ended; }));
    CHECK(c.streams[id].statuses == std::vector<int>{200});
    CHECK(c.streams[id].body == "after");
}

}  // namespace

TEST_CASE("h2: a streamed body of 4 MiB reaches a coroutine handler in pieces, whole",
          "[wire][h2][streamed-body]") {
    seen s;
    test_server server([&s](tern::app& app) { routes(app, s); });
    h2_raw c(server.port());
    const std::string body = pattern(4 << 20);
    c.post(1, "/sum", {{"content-length", std::to_string(body.size())}});
    REQUIRE(c.send_body(1, body, true) == body.size());
    REQUIRE(c.read_until([&] { return c.streams[1].ended; }));
    CHECK(c.streams[1].statuses == std::vector<int>{200});
    CHECK(c.streams[1].body == sum_of(body));
    CHECK(s.pieces > 1);
    CHECK_FALSE(c.streams[1].reset.has_value());
    next_stream_is_served(c, 3);
}

TEST_CASE("h2: a streamed body reaches a callback handler whole, with next's callback form",
          "[wire][h2][streamed-body]") {
    seen s;
    test_server server([&s](tern::app& app) { routes(app, s); });
    h2_raw c(server.port());
    const std::string body = pattern(3 << 20);
    c.post(1, "/cb");  // no content-length
    REQUIRE(c.send_body(1, body, true) == body.size());
    REQUIRE(c.read_until([&] { return c.streams[1].ended; }));
    CHECK(c.streams[1].statuses == std::vector<int>{200});
    fnv_digest d;
    d.update(body);
    CHECK(c.streams[1].body ==
          "callback bytes=" + std::to_string(body.size()) + " hash=" + std::to_string(d.h));
}

TEST_CASE("h2: a streamed body's trailers reach the handler after its last piece",
          "[wire][h2][streamed-body]") {
    seen s;
    test_server server([&s](tern::app& app) { routes(app, s); });
    h2_raw c(server.port());
    c.post(1, "/sum");
    c.send_body(1, "hello world", false);
    c.trailers(1, "x-sum", "11");
    REQUIRE(c.read_until([&] { return c.streams[1].ended; }));
    CHECK(c.streams[1].statuses == std::vector<int>{200});
    CHECK(c.streams[1].body == sum_of("hello world", "11"));
}

TEST_CASE(
    "h2: a slow consumer shuts the client's stream window at one window, and the client "
    "goes on when the handler asks again",
    "[wire][h2][streamed-body][backpressure]") {
    seen s;
    test_server server([&s](tern::app& app) { routes(app, s); });
    h2_raw c(server.port());
    const std::string body = pattern(1 << 20);
    c.post(1, "/slow", {{"content-length", std::to_string(body.size())}});
    // The handler takes one piece and asks for no more: the stream's window is not given
    // back, so the client can send one window and no more.
    const std::size_t sent = c.send_body(1, body, true, 500ms);
    REQUIRE(eventually([&] { return s.asked.load(); }));
    CHECK(sent == static_cast<std::size_t>(initial_window));
    CHECK(c.streams[1].send_window == 0);
    CHECK(c.connection_window > 0);  // the connection's window came back: not the limit
    CHECK(s.bytes <= static_cast<std::uint64_t>(initial_window));
    // Still shut a while later (longer than any batching of window updates).
    c.read_frames(300ms);
    CHECK(c.streams[1].send_window == 0);
    // Another stream on the same connection is served meanwhile.
    next_stream_is_served(c, 3);
    s.release = true;
    const std::size_t rest = c.send_body(1, std::string_view(body).substr(sent), true);
    CHECK(sent + rest == body.size());
    REQUIRE(c.read_until([&] { return c.streams[1].ended; }));
    CHECK(c.streams[1].statuses == std::vector<int>{200});
    CHECK(c.streams[1].body == "slow bytes=" + std::to_string(body.size()));
}

TEST_CASE(
    "h2: a handler answering before reading ends the stream with its answer, then "
    "RST_STREAM NO_ERROR, and the connection goes on",
    "[wire][h2][streamed-body]") {
    seen s;
    test_server server([&s](tern::app& app) { routes(app, s); });
    h2_raw c(server.port());
    c.post(1, "/refuse", {{"content-length", "1000000"}});
    c.send_body(1, std::string(20'000, 'x'), false, 200ms);
    REQUIRE(c.read_until([&] { return c.streams[1].reset.has_value(); }));
    CHECK(c.streams[1].statuses == std::vector<int>{401});
    CHECK(c.streams[1].body == "no");
    CHECK(c.streams[1].ended);  // the complete answer first (END_STREAM) ...
    CHECK(c.streams[1].reset == std::optional<std::uint32_t>(0));  // ... then NO_ERROR
    CHECK_FALSE(c.goaway.has_value());
    next_stream_is_served(c, 3);
}

TEST_CASE("h2: a stream the client resets ends the reading with client_left",
          "[wire][h2][streamed-body]") {
    seen s;
    test_server server([&s](tern::app& app) { routes(app, s); });
    h2_raw c(server.port());
    c.post(1, "/watch", {{"content-length", "100"}});
    c.send_body(1, "abc", false);
    REQUIRE(eventually([&] { return s.asked.load(); }));
    c.reset(1, 0x8);  // CANCEL
    REQUIRE(eventually([&] { return s.finished.load() == 1; }));
    CHECK(s.failure == static_cast<int>(tern::body_failure::client_left));
    next_stream_is_served(c, 3);
}

TEST_CASE("h2: a streamed body without a length passing the route's limit is too_large and 413",
          "[wire][h2][streamed-body][limits]") {
    seen s;
    test_server server([&s](tern::app& app) { routes(app, s); });
    h2_raw c(server.port());
    c.post(1, "/watch");
    c.send_body(1, std::string(64, 'a'), false);
    REQUIRE(eventually([&] { return s.asked.load(); }));  // the handler reads
    c.send_body(1, std::string(64, 'b'), false);
    REQUIRE(c.read_until([&] { return c.streams[1].ended; }));
    CHECK(c.streams[1].statuses == std::vector<int>{413});
    REQUIRE(eventually([&] { return s.finished.load() == 1; }));
    CHECK(s.failure == static_cast<int>(tern::body_failure::too_large));
    next_stream_is_served(c, 3);
}

TEST_CASE("h2: a streamed content-length over the route's limit is 413 before the handler runs",
          "[wire][h2][streamed-body][limits]") {
    seen s;
    test_server server([&s](tern::app& app) { routes(app, s); });
    h2_raw c(server.port());
    c.post(1, "/watch", {{"content-length", "101"}});
    REQUIRE(c.read_until([&] { return c.streams[1].ended || c.streams[1].reset; }));
    CHECK(c.streams[1].statuses == std::vector<int>{413});
    CHECK(s.finished == 0);
}

TEST_CASE("h2: a client silent while a piece is asked for gets 408 and the handler sees idle",
          "[wire][h2][streamed-body][timeouts]") {
    seen s;
    tern::config cfg = test_config();
    cfg.timeouts.body_idle = 300ms;
    test_server server([&s](tern::app& app) { routes(app, s); }, cfg);
    h2_raw c(server.port());
    c.post(1, "/watch", {{"content-length", "50"}});
    c.send_body(1, "abc", false);
    REQUIRE(c.read_until([&] { return c.streams[1].ended; }));
    CHECK(c.streams[1].statuses == std::vector<int>{408});
    REQUIRE(eventually([&] { return s.finished.load() == 1; }));
    CHECK(s.failure == static_cast<int>(tern::body_failure::idle));
    next_stream_is_served(c, 3);
}

TEST_CASE("h2: a slow consumer is not an idle client: no 408 while nothing is asked",
          "[wire][h2][streamed-body][timeouts]") {
    seen s;
    tern::config cfg = test_config();
    cfg.timeouts.body_idle = 200ms;
    test_server server([&s](tern::app& app) { routes(app, s); }, cfg);
    h2_raw c(server.port());
    c.post(1, "/slow", {{"content-length", "10"}});
    c.send_body(1, "0123456789", true);
    REQUIRE(eventually([&] { return s.asked.load(); }));
    c.read_frames(500ms);  // longer than body_idle, while nothing is asked
    CHECK(c.streams[1].statuses.empty());
    s.release = true;
    REQUIRE(c.read_until([&] { return c.streams[1].ended; }));
    CHECK(c.streams[1].statuses == std::vector<int>{200});
    CHECK(c.streams[1].body == "slow bytes=10");
}

TEST_CASE("h2: 100 Continue goes out on the handler's first next(), not before",
          "[wire][h2][streamed-body][expect]") {
    seen s;
    test_server server([&s](tern::app& app) { routes(app, s); });
    h2_raw c(server.port());
    c.post(1, "/wait", {{"content-length", "5"}, {"expect", "100-continue"}});
    c.read_frames(300ms);
    CHECK(c.streams[1].statuses.empty());  // the handler has not asked
    s.release = true;
    REQUIRE(c.read_until([&] { return !c.streams[1].statuses.empty(); }));
    CHECK(c.streams[1].statuses == std::vector<int>{100});
    c.send_body(1, "hello", true);
    REQUIRE(c.read_until([&] { return c.streams[1].ended; }));
    CHECK(c.streams[1].statuses == std::vector<int>{100, 200});
    CHECK(c.streams[1].body == "waited bytes=5");
}

TEST_CASE("h2: the stop's end ends a streamed body's reading with stopped",
          "[wire][h2][streamed-body][lifecycle]") {
    seen s;
    tern::config cfg = test_config();
    cfg.timeouts.drain = 300ms;
    test_server server([&s](tern::app& app) { routes(app, s); }, cfg);
    h2_raw c(server.port());
    c.post(1, "/watch", {{"content-length", "50"}});
    c.send_body(1, "abc", false);
    REQUIRE(eventually([&] { return s.asked.load(); }));
    server.stop();
    REQUIRE(eventually([&] { return s.finished.load() == 1; }));
    CHECK(s.failure == static_cast<int>(tern::body_failure::stopped));
}

}  // namespace wire_test_h2_streamed_bodies

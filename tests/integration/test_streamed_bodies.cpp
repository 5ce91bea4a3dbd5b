// Request bodies read as they arrive (tern::streamed_body, ctx.body_reader()) over HTTP/1.1:
// raw bytes over loopback. The handler runs after the head; each next() lets one piece in;
// 100 Continue goes out on the first next(); an answer before the end drains a small
// remainder (the connection stays) or closes; a departed client, a chunked body over the
// limit, an idle client and the stop's end each end the reading with their reason.

#include <catch2/catch.hpp>

#include "support/coroutine_support.hpp"
#include "support/eventually.hpp"
#include "support/fnv.hpp"
#include "support/loopback_socket.hpp"
#include "support/raw_client.hpp"
#include "support/streamed_routes.hpp"
#include "support/test_server.hpp"

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <thread>

namespace wire_test_streamed_bodies {

using namespace tern_test;
using namespace std::chrono_literals;

namespace {

using tern_test::fnv_digest;

using seen = tern_test::body_seen;

void routes(tern::app& app, seen& s) {
    constexpr std::size_t big = std::size_t{1} << 30;
    tern_test::add_sum_route(app, s);
    // The same with next()'s callback form, in a plain handler that defers.
    app.post(
        "/cb", tern::streamed_body([&s](tern::context& ctx) {
            auto reply = ctx.defer();
            auto body = std::make_shared<tern::body_reader>(ctx.body_reader());
            auto total = std::make_shared<std::uint64_t>(0);
            auto step = std::make_shared<tern::body_reader::piece_fn>();
            *step = [reply, body, total, step, &s](std::optional<std::string_view> piece,
                                                   std::error_code ec) {
                if (ec) {
                    s.failure = ec.value();
                    reply.complete([ec](tern::context& c) { c.status(500).text(ec.message()); });
                    *step = nullptr;
                    return;
                }
                if (!piece) {
                    reply.complete([n = *total](tern::context& c) {
                        c.text("callback bytes=" + std::to_string(n));
                    });
                    *step = nullptr;  // the cycle ends
                    return;
                }
                *total += piece->size();
                body->next(*step);
            };
            body->next(*step);
        }));
    // Refuses after the head, without asking for the body.
    app.post("/refuse", tern::streamed_body([](tern::context& ctx) -> tern::task {
                 ctx.status(401).text("no");
                 co_return;
             }));
    // Waits for the test's go before its first next() (100 Continue must wait too).
    app.post("/wait", tern::streamed_body([&s](tern::context& ctx) -> tern::task {
                 while (!s.release) co_await tern::sleep_for(5ms);
                 tern::body_reader body = ctx.body_reader();
                 std::uint64_t n = 0;
                 while (auto piece = co_await body.next()) n += piece->size();
                 ctx.text("waited bytes=" + std::to_string(n));
             }));
    // Takes one piece, then answers before the end.
    app.post("/first", tern::streamed_body([&s](tern::context& ctx) -> tern::task {
                 tern::body_reader body = ctx.body_reader();
                 auto piece = co_await body.next();
                 s.bytes = piece ? piece->size() : 0;
                 ctx.text("first");
             }));
    tern_test::add_watch_route(app, s);
    // A slow consumer: one piece, then nothing asked until the test's go.
    app.post("/slow",
             tern::body_limit(big, tern::streamed_body([&s](tern::context& ctx) -> tern::task {
                                  tern::body_reader body = ctx.body_reader();
                                  std::uint64_t n = 0;
                                  if (auto piece = co_await body.next()) n += piece->size();
                                  s.bytes = n;
                                  while (!s.release) co_await tern::sleep_for(5ms);
                                  while (auto piece = co_await body.next()) n += piece->size();
                                  ctx.text("slow bytes=" + std::to_string(n));
                              })));
    // A plain handler answering at once, without deferring or reading.
    app.post("/plain",
             tern::streamed_body([](tern::context& ctx) { ctx.status(403).text("plain"); }));
    // A route without streamed_body: the reader gives the whole body as one piece.
    app.post("/whole", [](tern::context& ctx) -> tern::task {
        tern::body_reader body = ctx.body_reader();
        std::string got;
        int pieces = 0;
        while (auto piece = co_await body.next()) {
            got.append(*piece);
            ++pieces;
        }
        ctx.text(std::to_string(pieces) + " " + got);
    });
    app.get("/after", [](tern::context& ctx) { ctx.text("after"); });
}

std::string head(std::string_view target, std::string_view framing, std::string_view extra = {}) {
    return "POST " + std::string(target) + " HTTP/1.1\r\nHost: localhost\r\n" +
           std::string(framing) + "\r\n" + std::string(extra) + "\r\n";
}

std::string length(std::uint64_t n) { return "Content-Length: " + std::to_string(n); }

std::string sum_of(std::string_view body, std::string_view trailer = "-") {
    fnv_digest d;
    d.update(body);
    return "bytes=" + std::to_string(body.size()) + " hash=" + std::to_string(d.h) +
           " trailer=" + std::string(trailer);
}

void another_client_is_served(const test_server& server) {
    raw_client other = server.client();
    other.send(get_request("/after"));
    const response r = other.read_response();
    CHECK(r.status == 200);
    CHECK(r.body == "after");
}

// A blocking TCP socket to 127.0.0.1, made non-blocking on demand.
class plain_socket {
public:
    explicit plain_socket(std::uint16_t port) : fd_(connect_loopback(port)) {
        REQUIRE(fd_ != platform::invalid_socket);
    }
    ~plain_socket() { platform::close_socket(fd_); }
    plain_socket(const plain_socket&) = delete;
    plain_socket& operator=(const plain_socket&) = delete;
    void non_blocking(bool on) { platform::set_non_blocking(fd_, on); }
    // Sends what the socket takes within `patience` of no progress; returns how much.
    std::size_t send_until_stalled(std::string_view chunk, std::uint64_t at_most,
                                   std::chrono::milliseconds patience) {
        non_blocking(true);
        std::size_t sent = 0;
        while (sent < at_most) {
            const auto n = platform::send_bytes(fd_, chunk.data(),
                                                std::min<std::size_t>(chunk.size(), at_most - sent),
                                                platform::no_signal);
            if (n > 0) {
                sent += static_cast<std::size_t>(n);
                continue;
            }
            if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
                if (platform::wait_socket(fd_, true, static_cast<int>(patience.count())) == 0) {
                    break;  // stalled
                }
                continue;
            }
            break;
        }
        non_blocking(false);
        return sent;
    }
    void send_all(std::string_view bytes) {
        while (!bytes.empty()) {
            const auto n =
                platform::send_bytes(fd_, bytes.data(), bytes.size(), platform::no_signal);
            REQUIRE(n > 0);
            bytes.remove_prefix(static_cast<std::size_t>(n));
        }
    }
    std::string read_some() {
        char buf[4096];
        const auto n = platform::receive_bytes(fd_, buf, sizeof buf, 0);
        return n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : std::string();
    }

private:
    platform::native_socket fd_;
};

}  // namespace

TEST_CASE(
    "a streamed Content-Length body reaches a coroutine handler whole, and the "
    "pipelined request behind it is answered",
    "[wire][streamed-body]") {
    seen s;
    test_server server([&s](tern::app& app) { routes(app, s); });
    raw_client c = server.client();
    const std::string body(100'000, 'x');
    c.send(head("/sum", length(body.size())) + body + get_request("/after"));
    const response r = c.read_response();
    INFO(describe(r));
    CHECK(r.status == 200);
    CHECK(r.body == sum_of(body));
    CHECK_FALSE(r.header("Connection").has_value());
    const response next = c.read_response();
    CHECK(next.body == "after");
    CHECK(s.pieces > 1);  // it came in pieces, not whole
    another_client_is_served(server);
}

TEST_CASE(
    "a streamed chunked body reaches the handler with its trailers, and the "
    "connection stays",
    "[wire][streamed-body]") {
    seen s;
    test_server server([&s](tern::app& app) { routes(app, s); });
    raw_client c = server.client();
    c.send(head("/sum", "Transfer-Encoding: chunked") +
           "5\r\nhello\r\n6\r\n world\r\n0\r\nX-Sum: 11\r\n\r\n");
    const response r = c.read_response();
    INFO(describe(r));
    CHECK(r.status == 200);
    CHECK(r.body == sum_of("hello world", "11"));
    CHECK(s.pieces == 2);
    c.send(get_request("/after"));
    CHECK(c.read_response().body == "after");
}

TEST_CASE("a callback handler reads a streamed body with next's callback form",
          "[wire][streamed-body]") {
    seen s;
    test_server server([&s](tern::app& app) { routes(app, s); });
    raw_client c = server.client();
    const std::string body(50'000, 'y');
    c.send(head("/cb", length(body.size())) + body);
    const response r = c.read_response();
    INFO(describe(r));
    CHECK(r.status == 200);
    CHECK(r.body == "callback bytes=50000");
    c.send(get_request("/after"));
    CHECK(c.read_response().body == "after");
    another_client_is_served(server);
}

TEST_CASE("a streamed body of 64 MiB is hashed as it arrives", "[wire][streamed-body]") {
    seen s;
    test_server server([&s](tern::app& app) { routes(app, s); });
    plain_socket sock(server.port());
    constexpr std::uint64_t total = std::uint64_t{64} << 20;
    std::string chunk(1 << 16, '\0');
    for (std::size_t i = 0; i < chunk.size(); ++i) chunk[i] = static_cast<char>('a' + i % 23);
    fnv_digest digest;
    sock.send_all(head("/sum", length(total)));
    for (std::uint64_t sent = 0; sent < total; sent += chunk.size()) {
        sock.send_all(chunk);
        digest.update(chunk);
    }
    std::string got;
    while (got.find("trailer=") == std::string::npos) {
        const auto more = sock.read_some();
        REQUIRE_FALSE(more.empty());
        got += more;
    }
    CHECK(got.find("200 OK") != std::string::npos);
    CHECK(got.find("bytes=" + std::to_string(total) + " hash=" + std::to_string(digest.h)) !=
          std::string::npos);
}

TEST_CASE("100 Continue goes out on the handler's first next(), not before",
          "[wire][streamed-body][expect]") {
    seen s;
    test_server server([&s](tern::app& app) { routes(app, s); });
    raw_client c = server.client();
    c.send(head("/wait", length(5), "Expect: 100-continue\r\n"));
    // The handler has not asked: no 100 Continue.
    CHECK_THROWS_AS(c.read_response(false, 300ms), client_error);
    s.release = true;
    const response interim = c.read_response();
    CHECK(interim.status == 100);
    c.send("hello");
    const response r = c.read_response();
    CHECK(r.status == 200);
    CHECK(r.body == "waited bytes=5");
    c.send(get_request("/after"));
    CHECK(c.read_response().body == "after");
}

TEST_CASE(
    "a handler refusing after the head never invites the body: no 100 Continue, and "
    "the connection closes",
    "[wire][streamed-body][expect]") {
    seen s;
    test_server server([&s](tern::app& app) { routes(app, s); });
    raw_client c = server.client();
    c.send(head("/refuse", length(1'000'000), "Expect: 100-continue\r\n"));
    const response r = c.read_response();
    INFO(describe(r));
    CHECK(r.status == 401);
    CHECK(r.header("Connection") == std::optional<std::string>("close"));
    CHECK(c.closed_by_peer());
    another_client_is_served(server);
}

TEST_CASE(
    "a handler answering before a small remainder's end keeps the connection: the "
    "remainder is read and discarded",
    "[wire][streamed-body]") {
    seen s;
    test_server server([&s](tern::app& app) { routes(app, s); });
    raw_client c = server.client();
    const std::string body(10'000, 'z');
    c.send(head("/refuse", length(body.size())) + body + get_request("/after"));
    const response r = c.read_response();
    INFO(describe(r));
    CHECK(r.status == 401);
    CHECK_FALSE(r.header("Connection").has_value());
    const response next = c.read_response();
    CHECK(next.status == 200);
    CHECK(next.body == "after");
}

TEST_CASE(
    "a handler answering before a large remainder's end answers with Connection: close "
    "and closes",
    "[wire][streamed-body]") {
    seen s;
    test_server server([&s](tern::app& app) { routes(app, s); });
    raw_client c = server.client();
    c.send(head("/first", length(10'000'000)) + std::string(100'000, 'q'));
    const response r = c.read_response();
    INFO(describe(r));
    CHECK(r.status == 200);
    CHECK(r.body == "first");
    CHECK(r.header("Connection") == std::optional<std::string>("close"));
    CHECK(s.bytes > 0);
    CHECK(c.closed_by_peer());
    another_client_is_served(server);
}

TEST_CASE(
    "a plain handler answering a streamed route at once keeps the connection when "
    "the body is small, and closes it when it is large",
    "[wire][streamed-body]") {
    seen s;
    test_server server([&s](tern::app& app) { routes(app, s); });
    raw_client c = server.client();
    c.send(head("/plain", length(5)) + "hello" + get_request("/after"));
    const response r = c.read_response();
    CHECK(r.status == 403);
    CHECK_FALSE(r.header("Connection").has_value());
    CHECK(c.read_response().body == "after");
    raw_client big = server.client();
    big.send(head("/plain", length(1'000'000)) + "x");
    const response refused = big.read_response();
    CHECK(refused.status == 403);
    CHECK(refused.header("Connection") == std::optional<std::string>("close"));
    CHECK(big.closed_by_peer());
    another_client_is_served(server);
}

TEST_CASE("on a route without streamed_body the reader gives the whole body as one piece",
          "[wire][streamed-body]") {
    seen s;
    test_server server([&s](tern::app& app) { routes(app, s); });
    raw_client c = server.client();
    c.send(head("/whole", "Transfer-Encoding: chunked") + "3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n");
    const response r = c.read_response();
    CHECK(r.status == 200);
    CHECK(r.body == "1 abcde");
}

TEST_CASE("a handler answering before a chunked body's end answers with Connection: close",
          "[wire][streamed-body]") {
    seen s;
    test_server server([&s](tern::app& app) { routes(app, s); });
    raw_client c = server.client();
    c.send(head("/first", "Transfer-Encoding: chunked") + "3\r\nabc\r\n");
    const response r = c.read_response();
    INFO(describe(r));
    CHECK(r.body == "first");
    CHECK(r.header("Connection") == std::optional<std::string>("close"));
    CHECK(c.closed_by_peer());
    another_client_is_served(server);
}

TEST_CASE("a client leaving during a streamed body ends the reading with client_left",
          "[wire][streamed-body]") {
    seen s;
    test_server server([&s](tern::app& app) { routes(app, s); });
    {
        raw_client c = server.client();
        c.send(head("/watch", length(100)) + "abc");
        REQUIRE(eventually([&] { return s.asked.load(); }));
    }  // closed
    REQUIRE(eventually([&] { return s.finished.load() == 1; }));
    CHECK(s.failure == static_cast<int>(tern::body_failure::client_left));
    another_client_is_served(server);
}

TEST_CASE(
    "a chunked streamed body passing the route's limit fails next() with too_large and "
    "tern answers 413",
    "[wire][streamed-body][limits]") {
    seen s;
    test_server server([&s](tern::app& app) { routes(app, s); });
    raw_client c = server.client();
    c.send(head("/watch", "Transfer-Encoding: chunked") + "40\r\n" + std::string(64, 'a') +
           "\r\n40\r\n" + std::string(64, 'b') + "\r\n0\r\n\r\n");
    const response r = c.read_response();
    INFO(describe(r));
    CHECK(r.status == 413);
    CHECK(r.header("Connection") == std::optional<std::string>("close"));
    CHECK(c.closed_by_peer());
    REQUIRE(eventually([&] { return s.finished.load() == 1; }));
    CHECK(s.failure == static_cast<int>(tern::body_failure::too_large));
    another_client_is_served(server);
}

TEST_CASE("a streamed Content-Length over the route's limit is 413 before the handler runs",
          "[wire][streamed-body][limits]") {
    seen s;
    test_server server([&s](tern::app& app) { routes(app, s); });
    raw_client c = server.client();
    c.send(head("/watch", length(101)));
    const response r = c.read_response();
    CHECK(r.status == 413);
    CHECK(s.finished == 0);
    another_client_is_served(server);
}

TEST_CASE("a client silent while a piece is asked for gets 408 and the handler sees idle",
          "[wire][streamed-body][timeouts]") {
    seen s;
    tern::config cfg = test_config();
    cfg.timeouts.body_idle = 300ms;
    test_server server([&s](tern::app& app) { routes(app, s); }, cfg);
    raw_client c = server.client();
    c.send(head("/watch", length(50)) + "abc");
    const response r = c.read_response();
    INFO(describe(r));
    CHECK(r.status == 408);
    CHECK(c.closed_by_peer());
    REQUIRE(eventually([&] { return s.finished.load() == 1; }));
    CHECK(s.failure == static_cast<int>(tern::body_failure::idle));
    another_client_is_served(server);
}

TEST_CASE("a slow consumer is not an idle client: no 408 while nothing is asked",
          "[wire][streamed-body][timeouts]") {
    seen s;
    tern::config cfg = test_config();
    cfg.timeouts.body_idle = 200ms;
    test_server server([&s](tern::app& app) { routes(app, s); }, cfg);
    raw_client c = server.client();
    c.send(head("/slow", length(10)) + "0123456789");
    REQUIRE(eventually([&] { return s.bytes.load() == 10; }));
    std::this_thread::sleep_for(500ms);  // longer than body_idle, while nothing is asked
    s.release = true;
    const response r = c.read_response();
    CHECK(r.status == 200);
    CHECK(r.body == "slow bytes=10");
}

TEST_CASE("the stop's end ends a streamed body's reading with stopped",
          "[wire][streamed-body][lifecycle]") {
    seen s;
    tern::config cfg = test_config();
    cfg.timeouts.drain = 300ms;
    test_server server([&s](tern::app& app) { routes(app, s); }, cfg);
    raw_client c = server.client();
    c.send(head("/watch", length(50)) + "abc");
    REQUIRE(eventually([&] { return s.asked.load(); }));
    server.stop();
    REQUIRE(eventually([&] { return s.finished.load() == 1; }));
    CHECK(s.failure == static_cast<int>(tern::body_failure::stopped));
}

TEST_CASE("a slow consumer stalls its client's sends while the server holds one buffer",
          "[wire][streamed-body][backpressure]") {
    seen s;
    test_server server([&s](tern::app& app) { routes(app, s); });
    auto owned = std::make_unique<plain_socket>(server.port());
    plain_socket& sock = *owned;
    constexpr std::uint64_t total = std::uint64_t{256} << 20;
    sock.send_all(head("/slow", length(total)));
    const std::string chunk(1 << 16, 's');
    // The handler takes one piece and asks for no more: the socket buffers fill and the
    // client's sends stop making progress, far short of the body.
    const std::size_t sent = sock.send_until_stalled(chunk, total, 500ms);
    INFO("sent before the stall: " << sent);
    CHECK(sent < total / 4);
    REQUIRE(eventually([&] { return s.bytes.load() > 0; }));
    CHECK(s.bytes <= 64 * 1024);  // one piece taken, no more
    // Still stalled a moment later: nothing is read while nothing is asked.
    CHECK(sock.send_until_stalled(chunk, total - sent, 300ms) < (std::size_t{1} << 20));
    another_client_is_served(server);
    owned.reset();  // the client leaves; the handler's next ask hears it
    s.release = true;
}

}  // namespace wire_test_streamed_bodies

// tern::streamed_body over HTTP/3 (step 2 of docs/plans/streamed-request-bodies.md): the
// handler runs on the head and reads the body as it arrives; the QUIC stream credit of a
// piece goes back only when the reader asks again, so a reader that does not ask stops the
// client's sending at one stream window. An early answer asks the client to stop sending
// (H3_NO_ERROR); a reset, a body over the limit and an idle client each end the reading with
// their reason. Built only with TERN_HTTP3.

#include <catch2/catch.hpp>

#include "support/eventually.hpp"
#include "support/fnv.hpp"
#include "support/quic_app.hpp"
#include "support/quic_client.hpp"
#include "support/streamed_routes.hpp"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace wire_test_h3_streamed_body {

using namespace std::chrono_literals;
using tern_test::eventually;
using tern_test::h3_body;
using tern_test::h3_data;
using tern_test::h3_fetch;
using tern_test::h3_post;
using tern_test::h3_statuses;
using tern_test::quic_app;
using tern_test::quic_client;
using tern_test::start_h3;

namespace {

using tern_test::fnv;

using seen = tern_test::body_seen;

void routes(tern::app& app, seen& s) {
    constexpr std::size_t big = std::size_t{1} << 30;
    app.post("/sum", tern::body_limit(
                         big, tern::streamed_body([&s](tern::context& ctx) -> tern::task {
                             tern::body_reader body = ctx.body_reader();
                             std::uint64_t h = fnv({});
                             std::uint64_t n = 0;
                             int pieces = 0;
                             while (std::optional<std::string_view> piece = co_await body.next()) {
                                 h = fnv(*piece, h);
                                 n += piece->size();
                                 ++pieces;
                             }
                             s.pieces = pieces;
                             ctx.text("bytes=" + std::to_string(n) + " hash=" + std::to_string(h));
                         })));
    app.post("/cb", tern::body_limit(
                        big, tern::streamed_body([](tern::context& ctx) {
                            auto reply = ctx.defer();
                            auto body = std::make_shared<tern::body_reader>(ctx.body_reader());
                            auto h = std::make_shared<std::uint64_t>(fnv({}));
                            auto total = std::make_shared<std::uint64_t>(0);
                            auto step = std::make_shared<tern::body_reader::piece_fn>();
                            *step = [reply, body, h, total, step](
                                        std::optional<std::string_view> piece, std::error_code ec) {
                                if (ec || !piece) {
                                    reply.complete([ec, n = *total, d = *h](tern::context& c) {
                                        if (ec) {
                                            c.status(500).text(ec.message());
                                        } else {
                                            c.text("callback bytes=" + std::to_string(n) +
                                                   " hash=" + std::to_string(d));
                                        }
                                    });
                                    *step = nullptr;
                                    return;
                                }
                                *h = fnv(*piece, *h);
                                *total += piece->size();
                                body->next(*step);
                            };
                            body->next(*step);
                        })));
    app.post("/refuse", tern::streamed_body([](tern::context& ctx) -> tern::task {
                 ctx.status(403).text("no");
                 co_return;
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
}

std::string pattern(std::size_t n) {
    std::string s(n, '\0');
    for (std::size_t i = 0; i < n; ++i) s[i] = static_cast<char>(i * 7 % 251);
    return s;
}

// A POST of `body` (its length declared unless `sized` is false), and its end when `fin`.
std::int64_t post(quic_client& c, std::string_view path, std::string_view body, bool fin,
                  bool sized = true, std::uint64_t declared = 0) {
    const auto id = c.open_bidi();
    REQUIRE(id >= 0);
    auto bytes = sized ? h3_post(path, declared != 0 ? declared : body.size()) : h3_post(path);
    if (!body.empty()) {
        const auto data = h3_data(body);
        bytes.insert(bytes.end(), data.begin(), data.end());
    }
    c.send(id, bytes, fin);
    return id;
}

bool answered(quic_client& c, std::int64_t id) {
    return c.pump_until([&] { return c.stream(id).ended || c.stream(id).reset; }, 20s);
}

}  // namespace

TEST_CASE("h3: a streamed body of 3 MiB reaches a coroutine handler in pieces, whole",
          "[http3][streamed-body]") {
    seen s;
    quic_app server({}, [&s](tern::app& app) { routes(app, s); });
    quic_client c(server.port);
    start_h3(c);
    const std::string body = pattern(3 << 20);
    const auto id = post(c, "/sum", body, true);
    REQUIRE(answered(c, id));
    const auto st = c.stream(id);
    CHECK(h3_statuses(st.bytes) == std::vector<int>{200});
    CHECK(h3_body(st.bytes) ==
          "bytes=" + std::to_string(body.size()) + " hash=" + std::to_string(fnv(body)));
    CHECK(s.pieces > 1);
}

TEST_CASE("h3: a streamed body reaches a callback handler whole, with next's callback form",
          "[http3][streamed-body]") {
    seen s;
    quic_app server({}, [&s](tern::app& app) { routes(app, s); });
    quic_client c(server.port);
    start_h3(c);
    const std::string body = pattern(2 << 20);
    const auto id = post(c, "/cb", body, true, false);
    REQUIRE(answered(c, id));
    const auto st = c.stream(id);
    CHECK(h3_statuses(st.bytes) == std::vector<int>{200});
    CHECK(h3_body(st.bytes) ==
          "callback bytes=" + std::to_string(body.size()) + " hash=" + std::to_string(fnv(body)));
}

TEST_CASE(
    "h3: a slow consumer stops the client's sending at one stream window, and the client "
    "goes on when the handler asks again",
    "[http3][streamed-body][backpressure]") {
    seen s;
    tern::config cfg;
    cfg.http3.stream_window = 64 * 1024;
    quic_app server(cfg, [&s](tern::app& app) { routes(app, s); });
    quic_client c(server.port);
    start_h3(c);
    const std::string body = pattern(2 << 20);
    const auto id = post(c, "/slow", body, true);
    REQUIRE(c.pump_until([&] { return s.asked.load(); }, 10s));
    // The handler took one piece and asks for no more: the credit is not given back.
    REQUIRE(c.pump_until([&] { return c.send_credit(id) == 0; }, 10s));
    c.pump(300ms);
    CHECK(c.send_credit(id) == 0);
    // What the server received (acknowledged) stays within one window and the frames' heads.
    CHECK(c.stream(id).acked <= 64 * 1024 + 64);
    CHECK(s.bytes <= 64 * 1024);
    // Another stream on the same connection is served meanwhile.
    const auto other = h3_fetch(c, "/");
    CHECK(h3_statuses(other.bytes) == std::vector<int>{200});
    s.release = true;
    REQUIRE(answered(c, id));
    const auto st = c.stream(id);
    CHECK(h3_statuses(st.bytes) == std::vector<int>{200});
    CHECK(h3_body(st.bytes) == "slow bytes=" + std::to_string(body.size()));
}

TEST_CASE(
    "h3: a handler answering before reading sends its whole answer and asks the client to "
    "stop sending, and the connection goes on",
    "[http3][streamed-body]") {
    seen s;
    quic_app server({}, [&s](tern::app& app) { routes(app, s); });
    quic_client c(server.port);
    start_h3(c);
    const auto id = post(c, "/refuse", std::string(20'000, 'x'), false, true, 1'000'000);
    REQUIRE(answered(c, id));
    const auto st = c.stream(id);
    CHECK(h3_statuses(st.bytes) == std::vector<int>{403});
    CHECK(h3_body(st.bytes) == "no");
    CHECK(st.ended);
    CHECK_FALSE(st.reset);
    // STOP_SENDING made the client reset its unfinished side, so the stream closes.
    CHECK(c.pump_until([&] { return c.stream(id).closed; }, 10s));
    const auto other = h3_fetch(c, "/");
    CHECK(h3_statuses(other.bytes) == std::vector<int>{200});
}

TEST_CASE("h3: a stream the client cancels ends the reading with client_left",
          "[http3][streamed-body]") {
    seen s;
    quic_app server({}, [&s](tern::app& app) { routes(app, s); });
    quic_client c(server.port);
    start_h3(c);
    const auto id = post(c, "/watch", "abc", false, true, 100);
    REQUIRE(c.pump_until([&] { return s.asked.load(); }, 10s));
    c.reset(id, 0x10c);  // H3_REQUEST_CANCELLED
    REQUIRE(c.pump_until([&] { return s.finished.load() == 1; }, 10s));
    CHECK(s.failure == static_cast<int>(tern::body_failure::client_left));
    const auto other = h3_fetch(c, "/");
    CHECK(h3_statuses(other.bytes) == std::vector<int>{200});
}

TEST_CASE("h3: a streamed body without a length passing the route's limit is too_large and 413",
          "[http3][streamed-body][limits]") {
    seen s;
    quic_app server({}, [&s](tern::app& app) { routes(app, s); });
    quic_client c(server.port);
    start_h3(c);
    const auto id = post(c, "/watch", std::string(64, 'a'), false, false);
    REQUIRE(c.pump_until([&] { return s.asked.load(); }, 10s));  // the handler reads
    c.send(id, h3_data(std::string(64, 'b')), false);
    REQUIRE(answered(c, id));
    const auto st = c.stream(id);
    // 413 is not in QPACK's static table (h3_statuses reads 0): its body says what it is.
    CHECK(h3_statuses(st.bytes).size() == 1);
    CHECK(h3_body(st.bytes).find("Too Large") != std::string::npos);
    REQUIRE(c.pump_until([&] { return s.finished.load() == 1; }, 10s));
    CHECK(s.failure == static_cast<int>(tern::body_failure::too_large));
}

TEST_CASE("h3: a client silent while a piece is asked for gets 408 and the handler sees idle",
          "[http3][streamed-body][timeouts]") {
    seen s;
    tern::config cfg;
    cfg.timeouts.body_idle = 300ms;
    quic_app server(cfg, [&s](tern::app& app) { routes(app, s); });
    quic_client c(server.port);
    start_h3(c);
    const auto id = post(c, "/watch", "abc", false, true, 50);
    REQUIRE(answered(c, id));
    CHECK(h3_statuses(c.stream(id).bytes).size() == 1);
    REQUIRE(c.pump_until([&] { return s.finished.load() == 1; }, 10s));
    CHECK(s.failure == static_cast<int>(tern::body_failure::idle));
}

}  // namespace wire_test_h3_streamed_body

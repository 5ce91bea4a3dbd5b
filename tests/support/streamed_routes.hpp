#pragma once
// Routes the streamed-body wire tests of HTTP/1.1, HTTP/2 and HTTP/3 share
// (tests/integration/test_streamed_bodies.cpp, test_h2_streamed_bodies.cpp,
// tests/quic/test_h3_streamed_body.cpp): the same handler, checked over each protocol.

#include "support/fnv.hpp"

#include <tern/tern.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace tern_test {

/// POST /sum: reads the whole body (up to 1 GiB); answers its length, digest and `x-sum`
/// trailer, and records its length and piece count in `s`.
inline void add_sum_route(tern::app& app, body_seen& s) {
    constexpr std::size_t big = std::size_t{1} << 30;
    app.post("/sum",
             tern::body_limit(
                 big, tern::streamed_body([&s](tern::context& ctx) -> tern::task {
                     tern::body_reader body = ctx.body_reader();
                     fnv_digest digest;
                     std::uint64_t n = 0;
                     int pieces = 0;
                     while (std::optional<std::string_view> piece = co_await body.next()) {
                         digest.update(*piece);
                         n += piece->size();
                         ++pieces;
                         s.bytes = n;
                     }
                     s.pieces = pieces;
                     ctx.text("bytes=" + std::to_string(n) + " hash=" + std::to_string(digest.h) +
                              " trailer=" + std::string(ctx.trailer("x-sum").value_or("-")));
                 })));
}

/// POST /watch (a 100-byte limit): reads until the reading ends or fails, and records the
/// bytes, why it failed (answering 500 then) and that it finished.
inline void add_watch_route(tern::app& app, body_seen& s) {
    app.post("/watch",
             tern::body_limit(100, tern::streamed_body([&s](tern::context& ctx) -> tern::task {
                                  tern::body_reader body = ctx.body_reader();
                                  try {
                                      while (auto piece = co_await body.next()) {
                                          s.bytes += piece->size();
                                          s.asked = true;
                                      }
                                      ctx.text("whole");
                                  } catch (const tern::body_error& e) {
                                      s.failure = static_cast<int>(e.reason());
                                      ctx.status(500).text("handler saw the failure");
                                  }
                                  ++s.finished;
                              })));
}

}  // namespace tern_test

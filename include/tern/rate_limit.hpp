#pragma once
/// @file rate_limit.hpp
/// Rate limiting: a before filter that answers 429 to a key (the client's address, a header,
/// a user) that makes requests faster than a token bucket allows (docs/rate-limits.md).

#include <tern/export.hpp>
#include <tern/handler.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

namespace tern {

/// One limit: `requests` per `per` for each key, with bursts of up to `burst`.
struct rate_limit_config {
    /// Requests a key may make per `per`, on average. Throws std::invalid_argument for 0.
    std::uint64_t requests = 60;
    /// The window `requests` are counted over. Throws std::invalid_argument when not positive.
    std::chrono::milliseconds per{60'000};
    /// Requests a key may make at once, after a quiet spell (the bucket's size); 0: `requests`.
    std::uint64_t burst = 0;
    /// What a key is, from the request: by default the client's address (`ctx.ip()`, which
    /// is the forwarded one behind `app.trusted_proxies`). A request whose key is empty is
    /// not limited (e.g. a header that is missing).
    std::function<std::string(context&)> key{};
    /// Keys each event loop remembers at once (a table of fixed size: about 120 bytes a key,
    /// allocated when the loop first uses the limit). Past it the least recently seen key is
    /// forgotten, which only lets that key through sooner. Throws std::invalid_argument for 0.
    std::size_t max_keys = 4096;
    /// The policy's name in the `RateLimit` and `RateLimit-Policy` fields.
    std::string name = "default";
};

/// A before filter that limits requests per key, e.g.
/// `app.before("/api/*", tern::rate_limit({.requests = 100, .per = std::chrono::seconds(60)}))`.
/// A request over the limit ends with 429 Too Many Requests (shaped by `app.error(429, ...)`
/// like tern's other errors), `Retry-After` in whole seconds, and the `RateLimit` and
/// `RateLimit-Policy` fields of the IETF draft (draft-ietf-httpapi-ratelimit-headers), which
/// every response the filter lets through carries too. Each event loop counts on its own
/// (no lock shared between loops): a client whose connections land on several loops may
/// make up to `threads` times the limit. Throws std::invalid_argument for a bad setting.
TERN_API handler rate_limit(rate_limit_config settings);

}  // namespace tern

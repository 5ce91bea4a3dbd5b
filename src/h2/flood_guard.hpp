#pragma once
// Rate limits for the frames a client can send for free and the server must work for
// (RST_STREAM, PING, SETTINGS, PRIORITY, empty DATA): a token bucket per kind. Past its
// burst and rate the client is closed with GOAWAY ENHANCE_YOUR_CALM (docs/http2.md).
// Transport-free: time is passed in.

#include "http/token_bucket.hpp"

#include <chrono>
#include <cstdint>

namespace tern::detail {

/// The frames of one connection that are limited, and their budgets.
class flood_guard {
public:
    using clock = token_bucket::clock;
    enum class kind { reset, ping, settings, priority, empty_data };

    /// `streams`: the connection's concurrent stream limit; a client may reset twice that
    /// many streams at once and that many per second (a page navigated away from resets
    /// its requests; a rapid-reset attack resets thousands a second).
    explicit flood_guard(std::uint32_t streams) noexcept;

    /// Counts one frame of `what`: false when it is one too many.
    bool allow(kind what, clock::time_point now) noexcept;

private:
    token_bucket resets_;
    token_bucket pings_;
    token_bucket settings_;
    token_bucket priorities_;
    token_bucket empty_data_;
};

}  // namespace tern::detail

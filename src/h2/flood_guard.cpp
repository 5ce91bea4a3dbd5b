#include "h2/flood_guard.hpp"

#include <algorithm>

namespace tern::detail {

// PING and SETTINGS: a client needs a few per connection (the preface's SETTINGS, an
// occasional liveness PING); PRIORITY frames come in bursts when a browser reorders a page's
// requests; an empty DATA frame without END_STREAM carries nothing at all.
flood_guard::flood_guard(std::uint32_t streams) noexcept
    : resets_(2 * streams, streams),
      pings_(50, 10),
      settings_(50, 10),
      priorities_(std::max<std::uint32_t>(2 * streams, 100), std::max<std::uint32_t>(streams, 50)),
      empty_data_(50, 10) {}

bool flood_guard::allow(kind what, clock::time_point now) noexcept {
    switch (what) {
        case kind::reset:
            return resets_.take(now);
        case kind::ping:
            return pings_.take(now);
        case kind::settings:
            return settings_.take(now);
        case kind::priority:
            return priorities_.take(now);
        case kind::empty_data:
            return empty_data_.take(now);
    }
    return false;
}

}  // namespace tern::detail

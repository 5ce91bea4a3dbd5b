#pragma once
// The Date header value (RFC 9110 5.6.7 IMF-fixdate), formatted once per second per thread.

#include <ctime>
#include <string_view>

namespace tern::detail {

/// Formats `t` as IMF-fixdate, e.g. "Sun, 06 Nov 1994 08:49:37 GMT", into `out` (29 chars).
void format_http_date(std::time_t t, char (&out)[29]) noexcept;

/// The current time as IMF-fixdate. Cached per thread and reformatted only when the second
/// changes, so a busy connection pays one clock read per response. Valid until the next
/// call on the same thread.
std::string_view http_date_now() noexcept;

}  // namespace tern::detail

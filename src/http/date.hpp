#pragma once
// The Date header value (RFC 9110 5.6.7 IMF-fixdate), formatted once per second per thread.

#include <array>
#include <ctime>
#include <string_view>

namespace tern::detail {

/// Day names of IMF-fixdate, indexed by `std::tm::tm_wday` (0 is Sunday).
inline constexpr std::array<std::string_view, 7> day_abbreviations = {"Sun", "Mon", "Tue", "Wed",
                                                                      "Thu", "Fri", "Sat"};
/// Month names of IMF-fixdate and of access logs, indexed by `std::tm::tm_mon` (0 is January).
inline constexpr std::array<std::string_view, 12> month_abbreviations = {
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};

/// Formats `t` as IMF-fixdate, e.g. "Sun, 06 Nov 1994 08:49:37 GMT", into `out` (29 chars).
void format_http_date(std::time_t t, char (&out)[29]) noexcept;

/// The current time as IMF-fixdate. Cached per thread and reformatted only when the second
/// changes, so a busy connection pays one clock read per response. Valid until the next
/// call on the same thread.
std::string_view http_date_now() noexcept;

}  // namespace tern::detail

#pragma once
// Reading an HTTP-date (RFC 9110 5.6.7) from If-Modified-Since, If-Unmodified-Since and
// If-Range. Formatting lives in http/date.hpp.

#include <ctime>
#include <optional>
#include <string_view>

namespace tern::detail {

/// Parses the three forms a recipient must accept (RFC 9110 5.6.7): IMF-fixdate
/// ("Sun, 06 Nov 1994 08:49:37 GMT"), rfc850-date ("Sunday, 06-Nov-94 08:49:37 GMT",
/// a two-digit year more than 50 years ahead of `now` is in the past century) and asctime
/// ("Sun Nov  6 08:49:37 1994"). std::nullopt for anything else, including impossible
/// dates (Feb 30) and surrounding text.
std::optional<std::time_t> parse_http_date(std::string_view s, std::time_t now) noexcept;

/// As above, relative to the current time.
std::optional<std::time_t> parse_http_date(std::string_view s) noexcept;

}  // namespace tern::detail

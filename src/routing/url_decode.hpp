#pragma once
// Percent-decoding of path parameters and query strings (RFC 3986 2.1).

#include <optional>
#include <string>
#include <string_view>

namespace tern::detail {

/// Percent-decodes `in` into `out` (replacing its contents). With `plus_is_space` (query
/// strings and forms), '+' becomes ' '. A '%' not followed by two hex digits is kept as is.
void url_decode(std::string_view in, std::string& out, bool plus_is_space);

/// Calls `fn(raw_name, raw_value)` for each `name=value` pair of a query string, in order,
/// undecoded. A pair without '=' has an empty value; empty pairs (`a=1&&b=2`) are skipped.
template <class Fn>
void for_each_query_pair(std::string_view query, Fn&& fn) {
    while (!query.empty()) {
        const auto amp = query.find('&');
        const std::string_view pair = query.substr(0, amp);
        query = amp == std::string_view::npos ? std::string_view{} : query.substr(amp + 1);
        if (pair.empty()) continue;
        const auto eq = pair.find('=');
        if (eq == std::string_view::npos) {
            fn(pair, std::string_view{});
        } else {
            fn(pair.substr(0, eq), pair.substr(eq + 1));
        }
    }
}

/// The decoded value of the first pair of `query` whose decoded name is `name`, or nullopt.
std::optional<std::string> find_query_param(std::string_view query, std::string_view name);

}  // namespace tern::detail

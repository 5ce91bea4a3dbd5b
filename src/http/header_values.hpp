#pragma once
// Reading request header fields the way RFC 9110 5.3 and 5.6.1 describe: names compare
// case-insensitively, a list may be split over several fields, empty members are skipped.

#include "http/request.hpp"
#include "http/token.hpp"

#include <tern/header_field.hpp>

#include <optional>
#include <span>
#include <string_view>

namespace tern::detail {

/// `s` without leading and trailing spaces and tabs (OWS).
std::string_view trim_ows(std::string_view s) noexcept;

/// The media type of a Content-Type value ("text/html; charset=utf-8" -> "text/html"):
/// the part before any parameter, OWS-trimmed, case as sent.
std::string_view media_type(std::string_view content_type) noexcept;

/// Parses a qvalue ("0", "0.5", "1.000"; RFC 9110 12.4.2) into thousandths, or -1.
int parse_qvalue(std::string_view s) noexcept;

/// A member of a list with weights (Accept, Accept-Encoding), its parameters split off.
struct weighted_member {
    std::string_view value;  ///< "text/html", "gzip": before any ';', OWS-trimmed
    int weight = 1000;       ///< thousandths: 1000 without a q parameter, 0 for an invalid one
};

/// Splits `member` ("gzip;q=0.5") into its value and weight. The q parameter's name is
/// case-insensitive; spaces around its '=' are tolerated (RFC 9110 12.4.2 has none, but a
/// refusal written "q = 0" is still a refusal).
weighted_member split_weight(std::string_view member) noexcept;

/// Whether some field is named `name`.
bool has_field(std::span<const header_field> headers, std::string_view name) noexcept;

/// The value of the field named `name` when it appears exactly once; std::nullopt when it
/// is absent or repeated (a singleton field sent twice is ignored, RFC 9110 5.3).
std::optional<std::string_view> single_field(std::span<const header_field> headers,
                                             std::string_view name) noexcept;

/// Calls `fn(element)` for each OWS-trimmed element of the comma-separated list `value`,
/// empty ones included ("a,,b" gives "a", "", "b"; "" gives one empty element), while `fn`
/// returns true. False when `fn` stopped it. For the fields where an empty element is an
/// error rather than nothing (Transfer-Encoding).
template <class Fn>
bool for_each_element(std::string_view value, Fn&& fn) {
    for (;;) {
        const std::size_t comma = value.find(',');
        if (!fn(trim_ows(value.substr(0, comma)))) return false;
        if (comma == std::string_view::npos) return true;
        value.remove_prefix(comma + 1);
    }
}

/// Calls `fn(member)` for each non-empty, OWS-trimmed member of the comma-separated list
/// formed by every field named `name`, in order (RFC 9110 5.6.1.2: empty elements are
/// ignored). Not for lists whose members may quote a comma (entity tags have their own
/// reader).
template <class Fn>
void for_each_member(std::span<const header_field> headers, std::string_view name, Fn&& fn) {
    for (const auto& h : headers) {
        if (!iequals(h.name, name)) continue;
        for_each_element(h.value, [&](std::string_view member) {
            if (!member.empty()) fn(member);
            return true;
        });
    }
}

}  // namespace tern::detail

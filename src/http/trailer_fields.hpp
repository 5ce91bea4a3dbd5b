#pragma once
// Response trailer fields (RFC 9110 6.5): which names a trailer section may carry, and the
// list a response keeps them in. Transport-free; the context checks a field with it when the
// application sets one, the transports merge a streamed body's own at its end.

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tern::detail {

/// A response's trailer fields in the order set, names lower-case.
using trailer_list = std::vector<std::pair<std::string, std::string>>;

/// Why `name: value` cannot be a response trailer field, or null when it can: a name that is
/// not a token or a value with a control character (as for a header), or a field RFC 9110
/// 6.5.1 keeps out of trailers (framing, routing, request modifiers, authentication,
/// response control, Content-*, and what HTTP/2 and HTTP/3 forbid anywhere).
const char* trailer_refusal(std::string_view name, std::string_view value) noexcept;

/// Sets `name` (lower-cased) to `value` in `list`, replacing a field of that name.
void set_trailer(trailer_list& list, std::string_view name, std::string_view value);

/// Sets each of `from`'s fields in `into` (`from`'s win over fields of the same name).
void merge_trailers(trailer_list& into, const trailer_list& from);

}  // namespace tern::detail

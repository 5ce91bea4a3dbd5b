#pragma once
// Reason phrases for status lines and default error bodies.

#include <string_view>

namespace tern::detail {

/// The RFC 9110 reason phrase for `status`, or "Unknown" for an unregistered code.
std::string_view reason_phrase(int status) noexcept;

/// Whether a response with `status` carries no body and no Content-Length (1xx, 204).
/// 304 carries no body either but may carry the Content-Length of the selected
/// representation; tern sends none for it.
constexpr bool status_forbids_body(int status) noexcept {
    return (status >= 100 && status < 200) || status == 204 || status == 304;
}

}  // namespace tern::detail

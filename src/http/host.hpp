#pragma once
// The syntax of a Host field value (RFC 9112 3.2, RFC 3986 3.2.2), checked by the parser.

#include <string_view>

namespace tern::detail {

/// Whether `host` is `uri-host [ ":" port ]`: a reg-name (without ','), an IPv4 address or
/// a bracketed IP literal, then optionally ':' and digits. An empty value is valid (RFC
/// 9112 3.2 allows an empty Host).
bool is_valid_host(std::string_view host) noexcept;

}  // namespace tern::detail

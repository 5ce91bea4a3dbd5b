#pragma once
// base64url without padding (RFC 4648 section 5): session ids and signed cookie values,
// both of which travel in cookies (cookie-octet allows every character of it).

#include <optional>
#include <string>
#include <string_view>

namespace tern::detail {

/// `bytes` as base64url without '=' padding: 4 characters per 3 bytes, 43 for 32 bytes.
std::string base64url_encode(std::string_view bytes);

/// The bytes `text` encodes, or std::nullopt when it is not canonical unpadded base64url: a
/// character outside A-Z a-z 0-9 '-' '_', a length that is 1 modulo 4, or unused low bits
/// of the last character set (so each byte string has exactly one encoding).
std::optional<std::string> base64url_decode(std::string_view text);

}  // namespace tern::detail

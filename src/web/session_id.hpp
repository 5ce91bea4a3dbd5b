#pragma once
// Session ids: 32 bytes from OpenSSL's CSPRNG, as 43 characters of base64url.

#include <cstddef>
#include <string>
#include <string_view>

namespace tern::detail {

/// Random bytes in a session id: 256 bits, beyond guessing.
inline constexpr std::size_t session_id_bytes = 32;
/// Characters of a session id (base64url of 32 bytes, unpadded).
inline constexpr std::size_t session_id_length = 43;

/// A new session id: `session_id_bytes` from RAND_bytes, base64url-encoded. Throws
/// std::runtime_error (with OpenSSL's reason) when the generator fails: an id must never be
/// made from anything weaker.
std::string new_session_id();

/// Whether `text` has the shape of a session id (length and alphabet), so that a malformed
/// cookie is refused without asking the store.
bool looks_like_session_id(std::string_view text) noexcept;

}  // namespace tern::detail

#pragma once
// JSON Web Tokens signed with HMAC-SHA256 (RFC 7519, RFC 7515 compact form, RFC 7518 3.2
// "HS256"): the example's only token format. The cryptography is OpenSSL's; this file only
// puts the pieces together and checks them.

#include <tern/json.hpp>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

namespace jwt {

// A token that is refused; what() says why, in words fit for a 401's body.
struct invalid_token : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// `bytes` in base64url without padding (RFC 7515 2, RFC 4648 5).
std::string base64url_encode(std::string_view bytes);
// The bytes of unpadded base64url `text`; throws invalid_token for a character outside the
// base64url alphabet, padding, or a length no encoding has.
std::string base64url_decode(std::string_view text);

// A compact token for `claims` (an object): header {"alg":"HS256","typ":"JWT"}, then the
// claims, then their HMAC-SHA256 under `secret`.
std::string sign(const tern::json& claims, std::string_view secret);

// The claims of `token` once it is proven good at time `now` (seconds since the epoch):
// three base64url parts; a header that is a JSON object with "alg" exactly "HS256" (so
// "none" and every other algorithm are refused), "typ" absent or "JWT", and no "crit"; a
// signature equal to HMAC-SHA256 under `secret` (compared in constant time); claims that
// are a JSON object with a string "sub" and integer "iat" and "exp", `now` before "exp" and
// not before "nbf" when there is one. Anything else throws invalid_token.
tern::json verify(std::string_view token, std::string_view secret, std::int64_t now);

}  // namespace jwt

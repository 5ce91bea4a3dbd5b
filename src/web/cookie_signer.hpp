#pragma once
// Signed cookies: a value the client keeps but cannot change. The cookie holds the value and
// an HMAC-SHA256 over the cookie's name and value under the app's secret (OpenSSL HMAC),
// compared in constant time (CRYPTO_memcmp). Signed, not encrypted: the client can read it.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace tern::detail {

class cookie_signer {
public:
    /// Bytes a secret needs at least (the HMAC-SHA256 output size; RFC 2104 section 3).
    static constexpr std::size_t min_key_size = 32;

    /// Signs with `key`. Throws std::invalid_argument for a key under `min_key_size` bytes.
    explicit cookie_signer(std::string key);

    /// The cookie value for cookie `name` carrying `value` (any bytes):
    /// base64url(value) "." base64url(HMAC-SHA256(key, context, name, value)). Throws
    /// std::runtime_error when OpenSSL fails.
    std::string sign(std::string_view name, std::string_view value) const;

    /// The value a cookie `name` with `cookie_value` carries when its signature is this
    /// key's; std::nullopt for anything else (tampered, re-signed under another name,
    /// malformed, unsigned).
    std::optional<std::string> verify(std::string_view name, std::string_view cookie_value) const;

private:
    std::string mac(std::string_view name, std::string_view value) const;

    std::string key_;
};

}  // namespace tern::detail

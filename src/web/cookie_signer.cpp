#include "web/cookie_signer.hpp"

#include "web/base64url.hpp"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <array>
#include <stdexcept>

// Last: OpenSSL's functions through the table that loads it on first use.
#include "openssl/calls.hpp"

namespace tern::detail {

namespace {

// Domain separation: a MAC made here is of no use as any other MAC under the same key.
constexpr std::string_view mac_context = "tern signed cookie v1";
constexpr std::size_t mac_size = 32;  // SHA-256

}  // namespace

cookie_signer::cookie_signer(std::string key) : key_(std::move(key)) {
    if (key_.size() < min_key_size) {
        throw std::invalid_argument("tern: a cookie secret needs at least " +
                                    std::to_string(min_key_size) + " bytes, not " +
                                    std::to_string(key_.size()));
    }
}

std::string cookie_signer::mac(std::string_view name, std::string_view value) const {
    // context NUL name NUL value: a name holds no NUL (it is a token), so the split between
    // name and value is unambiguous and "a"="bc" never signs as "ab"="c".
    std::string message;
    message.reserve(mac_context.size() + name.size() + value.size() + 2);
    message.append(mac_context).push_back('\0');
    message.append(name).push_back('\0');
    message.append(value);
    std::array<unsigned char, EVP_MAX_MD_SIZE> out{};
    unsigned int length = 0;
    if (HMAC(EVP_sha256(), key_.data(), static_cast<int>(key_.size()),
             reinterpret_cast<const unsigned char*>(message.data()), message.size(), out.data(),
             &length) == nullptr ||
        length != mac_size) {
        throw std::runtime_error("tern: HMAC-SHA256 failed in OpenSSL");
    }
    return {reinterpret_cast<const char*>(out.data()), length};
}

std::string cookie_signer::sign(std::string_view name, std::string_view value) const {
    return base64url_encode(value) + '.' + base64url_encode(mac(name, value));
}

std::optional<std::string> cookie_signer::verify(std::string_view name,
                                                 std::string_view cookie_value) const {
    const auto dot = cookie_value.rfind('.');
    if (dot == std::string_view::npos) return std::nullopt;
    auto value = base64url_decode(cookie_value.substr(0, dot));
    const auto sent = base64url_decode(cookie_value.substr(dot + 1));
    if (!value || !sent || sent->size() != mac_size) return std::nullopt;
    const std::string expected = mac(name, *value);
    if (CRYPTO_memcmp(expected.data(), sent->data(), mac_size) != 0) return std::nullopt;
    return value;
}

}  // namespace tern::detail

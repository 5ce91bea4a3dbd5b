#include "web/session_id.hpp"

#include "web/base64url.hpp"

#include <openssl/err.h>
#include <openssl/rand.h>

#include <array>
#include <stdexcept>

// Last: OpenSSL's functions through the table that loads it on first use.
#include "openssl/calls.hpp"

namespace tern::detail {

std::string new_session_id() {
    std::array<unsigned char, session_id_bytes> bytes{};
    // RAND_bytes returns 1 on success; 0 or -1 when the generator is not seeded or failed.
    if (RAND_bytes(bytes.data(), static_cast<int>(bytes.size())) != 1) {
        std::array<char, 256> reason{};
        ERR_error_string_n(ERR_get_error(), reason.data(), reason.size());
        throw std::runtime_error(std::string("tern: RAND_bytes failed, no session id made: ") +
                                 reason.data());
    }
    return base64url_encode(
        std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
}

bool looks_like_session_id(std::string_view text) noexcept {
    if (text.size() != session_id_length) return false;
    for (const char c : text) {
        const bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
                        (c >= '0' && c <= '9') || c == '-' || c == '_';
        if (!ok) return false;
    }
    return true;
}

}  // namespace tern::detail

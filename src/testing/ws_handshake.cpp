#include "testing/ws_handshake.hpp"

#include <tern/testing.hpp>

#include <openssl/evp.h>

namespace tern::testing::detail {

std::string base64(std::string_view bytes) {
    std::string out(4 * ((bytes.size() + 2) / 3) + 1, '\0');  // EVP_EncodeBlock adds a NUL
    const int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                  reinterpret_cast<const unsigned char*>(bytes.data()),
                                  static_cast<int>(bytes.size()));
    out.resize(static_cast<std::size_t>(n));
    return out;
}

std::string websocket_accept(std::string_view key) {
    std::string input(key);
    input += "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int length = 0;
    if (EVP_Digest(input.data(), input.size(), digest, &length, EVP_sha1(), nullptr) != 1) {
        throw client_error("tern::testing: OpenSSL could not compute a SHA-1");
    }
    return base64(std::string_view(reinterpret_cast<const char*>(digest), length));
}

}  // namespace tern::testing::detail

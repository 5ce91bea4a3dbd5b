#include "jwt.hpp"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <algorithm>
#include <array>
#include <limits>

namespace jwt {

namespace {

// The compact serialization's header for every token this example makes. nlohmann's keys
// come out sorted, so this is the text `{"alg":"HS256","typ":"JWT"}`.
const tern::json& hs256_header() {
    static const tern::json header = {{"alg", "HS256"}, {"typ", "JWT"}};
    return header;
}

bool is_base64url_char(char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '_';
}

// HMAC-SHA256 of `data` under `secret`, base64url-encoded (43 characters).
std::string encoded_signature(std::string_view data, std::string_view secret) {
    std::array<unsigned char, EVP_MAX_MD_SIZE> mac{};
    unsigned int mac_size = 0;
    if (HMAC(EVP_sha256(), secret.data(), static_cast<int>(secret.size()),
             reinterpret_cast<const unsigned char*>(data.data()), data.size(), mac.data(),
             &mac_size) == nullptr) {
        throw std::runtime_error("HMAC-SHA256 failed");
    }
    return base64url_encode({reinterpret_cast<const char*>(mac.data()), mac_size});
}

// A decoded part of the token as a JSON object; invalid_token when it is not one.
tern::json json_object(std::string_view part, const char* what) {
    tern::json value = tern::json::parse(base64url_decode(part), nullptr, false);
    if (!value.is_object()) throw invalid_token(std::string(what) + " is not a JSON object");
    return value;
}

// Claim `name` as seconds since the epoch; invalid_token when it is not an integer.
std::int64_t seconds_claim(const tern::json& claims, const char* name) {
    const auto it = claims.find(name);
    if (it == claims.end() || !it->is_number_integer() ||
        (it->is_number_unsigned() &&
         it->get<std::uint64_t>() >
             static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))) {
        throw invalid_token(std::string("claim '") + name + "' is missing or not an integer");
    }
    return it->get<std::int64_t>();
}

}  // namespace

std::string base64url_encode(std::string_view bytes) {
    // EVP_EncodeBlock writes standard base64 with '=' padding and a NUL (RFC 4648 4);
    // base64url swaps two characters and a JWT drops the padding.
    std::string text(4 * ((bytes.size() + 2) / 3) + 1, '\0');
    const int written = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(text.data()),
                                        reinterpret_cast<const unsigned char*>(bytes.data()),
                                        static_cast<int>(bytes.size()));
    text.resize(static_cast<std::size_t>(written));
    while (!text.empty() && text.back() == '=') text.pop_back();
    std::replace(text.begin(), text.end(), '+', '-');
    std::replace(text.begin(), text.end(), '/', '_');
    return text;
}

std::string base64url_decode(std::string_view text) {
    // EVP_DecodeBlock skips surrounding whitespace and takes '+', '/' and '=': check the
    // base64url alphabet first so that only one spelling of a part is read.
    if (text.size() % 4 == 1 || !std::all_of(text.begin(), text.end(), is_base64url_char)) {
        throw invalid_token("a part of the token is not base64url");
    }
    std::string padded(text);
    std::replace(padded.begin(), padded.end(), '-', '+');
    std::replace(padded.begin(), padded.end(), '_', '/');
    const std::size_t padding = (4 - padded.size() % 4) % 4;
    padded.append(padding, '=');
    std::string bytes(padded.size() / 4 * 3, '\0');
    const int decoded = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(bytes.data()),
                                        reinterpret_cast<const unsigned char*>(padded.data()),
                                        static_cast<int>(padded.size()));
    if (decoded < 0) throw invalid_token("a part of the token is not base64url");
    // EVP_DecodeBlock counts the bytes the padding stands for as zeros: drop them.
    bytes.resize(static_cast<std::size_t>(decoded) - padding);
    return bytes;
}

std::string sign(const tern::json& claims, std::string_view secret) {
    std::string token = base64url_encode(hs256_header().dump());
    token += '.';
    token += base64url_encode(claims.dump());
    const std::string signature = encoded_signature(token, secret);
    token += '.';
    token += signature;
    return token;
}

tern::json verify(std::string_view token, std::string_view secret, std::int64_t now) {
    const auto first_dot = token.find('.');
    const auto second_dot =
        first_dot == std::string_view::npos ? first_dot : token.find('.', first_dot + 1);
    if (second_dot == std::string_view::npos ||
        token.find('.', second_dot + 1) != std::string_view::npos) {
        throw invalid_token("a token has three parts separated by '.'");
    }
    const std::string_view header_part = token.substr(0, first_dot);
    const std::string_view claims_part = token.substr(first_dot + 1, second_dot - first_dot - 1);
    const std::string_view signature_part = token.substr(second_dot + 1);

    // The algorithm is fixed by the server, not chosen by the token (RFC 8725 3.1): "none"
    // and every other "alg" are refused before the signature is looked at.
    const tern::json header = json_object(header_part, "the token's header");
    const auto alg = header.find("alg");
    if (alg == header.end() || *alg != "HS256") {
        throw invalid_token("the token's algorithm is not HS256");
    }
    const auto typ = header.find("typ");
    if (typ != header.end() && *typ != "JWT") throw invalid_token("the token's type is not JWT");
    // RFC 7515 4.1.11: a "crit" extension this code does not know makes the token invalid.
    if (header.contains("crit")) throw invalid_token("the token's header has a 'crit' member");

    // Compared as text, in constant time: the base64url of the expected MAC has one
    // spelling, so a second spelling of a good signature is refused too.
    const std::string expected = encoded_signature(token.substr(0, second_dot), secret);
    if (signature_part.size() != expected.size() ||
        CRYPTO_memcmp(signature_part.data(), expected.data(), expected.size()) != 0) {
        throw invalid_token("the token's signature does not match");
    }

    tern::json claims = json_object(claims_part, "the token's payload");
    const auto sub = claims.find("sub");
    if (sub == claims.end() || !sub->is_string()) {
        throw invalid_token("claim 'sub' is missing or not a string");
    }
    seconds_claim(claims, "iat");
    // RFC 7519 4.1.4: the current time must be before "exp".
    if (now >= seconds_claim(claims, "exp")) throw invalid_token("the token has expired");
    if (claims.contains("nbf") && now < seconds_claim(claims, "nbf")) {
        throw invalid_token("the token is not valid yet");
    }
    return claims;
}

}  // namespace jwt

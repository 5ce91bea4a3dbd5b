#include "tls/ticket_keys.hpp"

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/kdf.h>
#include <openssl/params.h>
#include <openssl/rand.h>

#include <algorithm>
#include <charconv>
#include <stdexcept>
#include <string>

// Last: OpenSSL's functions through the table that loads it on first use.
#include "openssl/calls.hpp"

namespace tern::detail {

ticket_secret new_ticket_secret() {
    ticket_secret s{};
    if (RAND_bytes(s.data(), static_cast<int>(s.size())) != 1) {
        throw std::runtime_error("tls: no random bytes for the session-ticket secret");
    }
    return s;
}

std::int64_t ticket_period_of(std::chrono::system_clock::time_point now) noexcept {
    const auto since = std::chrono::duration_cast<std::chrono::seconds>(now.time_since_epoch());
    return since.count() / ticket_key_period.count();
}

ticket_key ticket_key_for(const ticket_secret& secret, std::int64_t period) {
    // HKDF-SHA256(secret, info = "tern ticket keys " + period): 80 bytes, cut in three. No
    // allocation here: it runs in OpenSSL's callback, inside every handshake.
    char info[48] = "tern ticket keys ";
    const std::size_t prefix = std::char_traits<char>::length(info);
    const auto end = std::to_chars(info + prefix, info + sizeof info, period).ptr;
    const auto info_size = static_cast<std::size_t>(end - info);
    EVP_KDF* kdf = EVP_KDF_fetch(nullptr, "HKDF", nullptr);
    EVP_KDF_CTX* ctx = kdf != nullptr ? EVP_KDF_CTX_new(kdf) : nullptr;
    EVP_KDF_free(kdf);
    if (ctx == nullptr) throw std::runtime_error("tls: HKDF is not available");
    char digest[] = "SHA256";
    ticket_secret key_material = secret;
    const OSSL_PARAM params[] = {
        OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_DIGEST, digest, 0),
        OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_KEY, key_material.data(),
                                          key_material.size()),
        OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_INFO, info, info_size),
        OSSL_PARAM_construct_end(),
    };
    unsigned char out[16 + 32 + 32];
    const int rc = EVP_KDF_derive(ctx, out, sizeof out, params);
    EVP_KDF_CTX_free(ctx);
    OPENSSL_cleanse(key_material.data(), key_material.size());
    if (rc != 1) throw std::runtime_error("tls: HKDF failed for the session-ticket keys");
    ticket_key k;
    std::copy(out, out + 16, k.name.begin());
    std::copy(out + 16, out + 48, k.aes.begin());
    std::copy(out + 48, out + 80, k.hmac.begin());
    OPENSSL_cleanse(out, sizeof out);
    return k;
}

ticket_keys::~ticket_keys() {
    OPENSSL_cleanse(secret_.data(), secret_.size());
    OPENSSL_cleanse(held_.data(), sizeof held_);
}

ticket_key ticket_keys::key_for(std::int64_t period) {
    {
        const std::lock_guard lock(mutex_);
        for (const held& h : held_) {
            if (h.period == period) return h.key;
        }
    }
    // Derived outside the lock: two threads may both derive a new period's keys (the same).
    const ticket_key derived = ticket_key_for(secret_, period);
    const std::lock_guard lock(mutex_);
    held& older = held_[0].period < held_[1].period ? held_[0] : held_[1];
    if (held_[0].period != period && held_[1].period != period) older = {period, derived};
    return derived;
}

int ticket_keys::find(std::int64_t now, const unsigned char (&name)[16], ticket_key& key) {
    for (const int age : {0, 1}) {
        ticket_key candidate = key_for(now - age);
        if (CRYPTO_memcmp(candidate.name.data(), name, sizeof name) == 0) {
            key = candidate;
            return age == 0 ? 1 : 2;
        }
    }
    return 0;
}

}  // namespace tern::detail

#include "passwords.hpp"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

#include <climits>
#include <stdexcept>

namespace {

constexpr std::size_t salt_size = 16;  // 128 bits (NIST SP 800-132 asks for at least that)
constexpr std::size_t hash_size = 32;  // SHA-256's output; more adds no strength

bool same_bytes(std::string_view a, std::string_view b) {
    return a.size() == b.size() && CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

}  // namespace

password_store::password_store(std::uint32_t iterations) : iterations_(iterations) {
    if (iterations_ > INT_MAX) throw std::invalid_argument("PBKDF2 iterations above INT_MAX");
    std::string random(salt_size, '\0');
    if (RAND_bytes(reinterpret_cast<unsigned char*>(random.data()), salt_size) != 1) {
        throw std::runtime_error("RAND_bytes failed");
    }
    decoy_ = make_record(random);
}

void password_store::add(std::string_view user, std::string_view password) {
    users_.insert_or_assign(std::string(user), make_record(password));
}

bool password_store::check(std::string_view user, std::string_view password) const {
    const auto it = users_.find(user);
    const record& stored = it == users_.end() ? decoy_ : it->second;
    const bool match = same_bytes(derive(password, stored.salt), stored.hash);
    return match && it != users_.end();
}

password_store::record password_store::make_record(std::string_view password) const {
    record r;
    if (iterations_ > 0) {
        r.salt.resize(salt_size);
        if (RAND_bytes(reinterpret_cast<unsigned char*>(r.salt.data()), salt_size) != 1) {
            throw std::runtime_error("RAND_bytes failed");
        }
    }
    r.hash = derive(password, r.salt);
    return r;
}

std::string password_store::derive(std::string_view password, std::string_view salt) const {
    if (iterations_ == 0) return std::string(password);
    std::string out(hash_size, '\0');
    if (PKCS5_PBKDF2_HMAC(password.data(), static_cast<int>(password.size()),
                          reinterpret_cast<const unsigned char*>(salt.data()),
                          static_cast<int>(salt.size()), static_cast<int>(iterations_),
                          EVP_sha256(), static_cast<int>(hash_size),
                          reinterpret_cast<unsigned char*>(out.data())) != 1) {
        throw std::runtime_error("PKCS5_PBKDF2_HMAC failed");
    }
    return out;
}

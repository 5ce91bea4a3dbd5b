#pragma once
// The example's users: names and password hashes in memory, made at start-up.

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

// Passwords stored as PBKDF2-HMAC-SHA256 (RFC 8018 5.2) with a random 16-byte salt per
// user, or, with 0 iterations, as the plain text (what a benchmark of token handling alone
// wants). Read-only once filled, so the event-loop threads share it without a lock.
class password_store {
public:
    // `iterations` of PBKDF2 per hash; 0 stores and compares passwords as they are.
    explicit password_store(std::uint32_t iterations);

    // Adds (or replaces) `user` with `password`. Throws std::runtime_error when OpenSSL
    // cannot make a salt or a hash.
    void add(std::string_view user, std::string_view password);

    // Whether `user` exists and `password` is theirs. An unknown user costs one hash too,
    // so the time taken does not tell which user names exist.
    bool check(std::string_view user, std::string_view password) const;

private:
    struct record {
        std::string salt;
        std::string hash;  // PBKDF2 output, or the password itself with 0 iterations
    };

    record make_record(std::string_view password) const;
    std::string derive(std::string_view password, std::string_view salt) const;

    std::uint32_t iterations_;
    std::map<std::string, record, std::less<>> users_;
    record decoy_;  // compared against for an unknown user
};

#pragma once
/// @file ticket_keys.hpp
/// Session-ticket keys that rotate by the clock without shared state: the keys of hour E are
/// derived (HKDF-SHA256, OpenSSL) from a random secret made when the certificates are
/// loaded, so every worker thread computes the same keys on its own, with no lock. A ticket
/// is issued under the current hour's key and accepted under it or the previous hour's (then
/// renewed), so a ticket lives one to two hours and a key stops decrypting two hours after
/// it was first used (docs/tls.md).

#include <array>
#include <chrono>
#include <cstdint>

namespace tern::detail {

/// How often the ticket key changes.
inline constexpr std::chrono::seconds ticket_key_period{3600};

/// One period's keys: the name sent in the ticket, the AES-256-CBC key, the HMAC-SHA256 key.
struct ticket_key {
    std::array<unsigned char, 16> name{};
    std::array<unsigned char, 32> aes{};
    std::array<unsigned char, 32> hmac{};
};

/// The secret all periods' keys come from.
using ticket_secret = std::array<unsigned char, 32>;

/// A fresh random secret (RAND_bytes). Throws std::runtime_error when OpenSSL cannot make one.
ticket_secret new_ticket_secret();

/// The period `now` falls in (whole periods since the Unix epoch).
std::int64_t ticket_period_of(std::chrono::system_clock::time_point now) noexcept;

/// The keys of `period` under `secret`. Throws std::runtime_error when HKDF fails.
ticket_key ticket_key_for(const ticket_secret& secret, std::int64_t period);

/// Which key a ticket named `name` was issued under, seen in period `now`: 1 the current
/// one, 2 the previous one (accept, and issue a new ticket), 0 neither (a full handshake).
/// `key` is set to it when not 0.
int find_ticket_key(const ticket_secret& secret, std::int64_t now, const unsigned char (&name)[16],
                    ticket_key& key);

}  // namespace tern::detail

#pragma once
/// @file ticket_keys.hpp
/// Session-ticket keys that rotate by the clock: the keys of hour E are derived
/// (HKDF-SHA256, OpenSSL) from a random secret made when the certificates are loaded, so
/// they need no coordination between workers. A ticket is issued under the current hour's
/// key and accepted under it or the previous hour's (then renewed), so a ticket lives one to
/// two hours and a key stops decrypting two hours after it was first used (docs/tls.md).
/// The derivation costs about 55,000 instructions (a ninth of a resumed TLS 1.2 connection),
/// so `ticket_keys` keeps the last two hours' keys once derived.

#include <array>
#include <chrono>
#include <cstdint>
#include <mutex>

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

/// The keys of the periods in use under one secret, each derived once and kept: shared by
/// the worker threads' handshakes, with a lock held only to look up or copy a key.
class ticket_keys {
public:
    explicit ticket_keys(const ticket_secret& secret) noexcept : secret_(secret) {}
    ~ticket_keys();
    ticket_keys(const ticket_keys&) = delete;
    ticket_keys& operator=(const ticket_keys&) = delete;

    /// The keys of `period` (ticket_key_for, derived on the first call for it). Throws
    /// std::runtime_error when HKDF fails.
    ticket_key key_for(std::int64_t period);

    /// Which key a ticket named `name` was issued under, seen in period `now`: 1 the
    /// current one, 2 the previous one (accept, and issue a new ticket), 0 neither (a full
    /// handshake). `key` is set to it when not 0.
    int find(std::int64_t now, const unsigned char (&name)[16], ticket_key& key);

private:
    struct held {
        std::int64_t period = -1;  // -1: none yet
        ticket_key key;
    };
    ticket_secret secret_;
    std::mutex mutex_;
    std::array<held, 2> held_;  // the two periods asked for last; the older is replaced
};

}  // namespace tern::detail

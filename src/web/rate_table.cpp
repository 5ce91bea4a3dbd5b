#include "web/rate_table.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <random>

namespace tern::detail {

namespace {

// A 64-bit mix of the key's hash with the table's seed (splitmix64's finalizer), so that
// which set a key lands in cannot be worked out from the key alone.
std::uint64_t mix(std::uint64_t x) noexcept {
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

std::uint64_t random_seed() {
    std::random_device rd;
    return (std::uint64_t{rd()} << 32) ^ rd();
}

}  // namespace

rate_table::rate_table(std::size_t capacity, std::uint64_t requests, clock::duration per,
                       std::uint64_t burst)
    : seed_(random_seed()) {
    sets_ = std::max<std::size_t>(1, (capacity + ways - 1) / ways);
    slots_.resize(sets_ * ways);
    burst_ = static_cast<double>(std::max<std::uint64_t>(burst, 1));
    const auto per_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(per).count();
    per_token_ns_ = static_cast<double>(std::max<std::int64_t>(per_ns, 1)) /
                    static_cast<double>(std::max<std::uint64_t>(requests, 1));
}

bool rate_table::holds(const slot& s, std::string_view key, std::uint64_t hash) const noexcept {
    if (!s.used || s.hash != hash) return false;
    if (key.size() > key_bytes) return s.length == 0xff;
    return s.length == key.size() && std::memcmp(s.key.data(), key.data(), key.size()) == 0;
}

rate_table::decision rate_table::take(std::string_view key, clock::time_point now) noexcept {
    const std::uint64_t hash = std::hash<std::string_view>{}(key);
    slot* const set = &slots_[(mix(hash ^ seed_) % sets_) * ways];
    slot* s = nullptr;
    slot* oldest = set;
    for (std::size_t i = 0; i < ways; ++i) {
        if (holds(set[i], key, hash)) {
            s = &set[i];
            break;
        }
        if (!set[i].used || (oldest->used && set[i].last < oldest->last)) oldest = &set[i];
    }
    if (s == nullptr) {
        // A key not seen (or forgotten): a full bucket, in the set's least recently used place.
        s = oldest;
        s->used = true;
        s->hash = hash;
        if (key.size() > key_bytes) {
            s->length = 0xff;
        } else {
            s->length = static_cast<std::uint8_t>(key.size());
            std::memcpy(s->key.data(), key.data(), key.size());
        }
        s->tokens = burst_;
        s->last = now;
    } else if (now > s->last) {
        const auto elapsed = std::chrono::duration_cast<std::chrono::nanoseconds>(now - s->last);
        s->tokens =
            std::min(burst_, s->tokens + static_cast<double>(elapsed.count()) / per_token_ns_);
        s->last = now;
    }
    decision d;
    if (s->tokens >= 1.0) {
        s->tokens -= 1.0;
        d.allowed = true;
    } else {
        d.retry_after = std::chrono::nanoseconds(
            static_cast<std::int64_t>(std::ceil((1.0 - s->tokens) * per_token_ns_)));
    }
    d.remaining = static_cast<std::uint64_t>(s->tokens);
    d.reset = std::chrono::nanoseconds(
        static_cast<std::int64_t>(std::ceil((burst_ - s->tokens) * per_token_ns_)));
    return d;
}

std::size_t rate_table::used() const noexcept {
    return static_cast<std::size_t>(
        std::count_if(slots_.begin(), slots_.end(), [](const slot& s) { return s.used; }));
}

}  // namespace tern::detail

#include "web/memory_session_store.hpp"

#include <algorithm>
#include <iterator>
#include <stdexcept>
#include <string>
#include <utility>

namespace tern::detail {

namespace {

// The share of the store new sessions may hold: an eighth of its sessions and of its bytes.
constexpr std::size_t probation_divisor = 8;
constexpr std::size_t min_bytes = 64 * 1024;

}  // namespace

memory_session_store::memory_session_store(std::size_t max_sessions, std::size_t max_bytes,
                                           session_clock now)
    : now_(std::move(now)),
      probation_sessions_(std::max<std::size_t>(1, max_sessions / probation_divisor)),
      probation_bytes_(max_bytes / probation_divisor),
      established_sessions_(max_sessions - std::min(max_sessions, probation_sessions_)),
      established_bytes_(max_bytes - probation_bytes_) {
    if (max_sessions < 2) throw std::invalid_argument("sessions: max_sessions must be at least 2");
    if (max_bytes < min_bytes) {
        throw std::invalid_argument("sessions: max_store_bytes must be at least 65536");
    }
}

std::size_t memory_session_store::cost(std::string_view id, const session_data& data) noexcept {
    std::size_t n = session_overhead + id.size();
    for (const auto& [key, value] : data.values) n += value_overhead + key.size() + value.size();
    return n;
}

std::optional<session_data> memory_session_store::load(std::string_view id) {
    const auto now = now_();
    const std::lock_guard lock(mutex_);
    const auto found = index_.find(id);
    if (found == index_.end()) return std::nullopt;
    const auto it = found->second;
    if (it->expires <= now) {
        remove_locked(it);
        return std::nullopt;
    }
    auto& in = list_of(it->standing);
    in.splice(in.begin(), in, it);
    return it->data;
}

void memory_session_store::save(std::string_view id, const session_data& data,
                                std::chrono::system_clock::time_point expires) {
    save(id, data, expires, false);
}

void memory_session_store::save(std::string_view id, const session_data& data,
                                std::chrono::system_clock::time_point expires, bool rotated) {
    const auto now = now_();
    const std::lock_guard lock(mutex_);
    sweep_locked(now);
    auto standing = rotated ? session_standing::rotated : session_standing::fresh;
    const auto found = index_.find(id);
    if (found != index_.end()) {
        const auto it = found->second;
        // Saved again by a later request: its cookie came back.
        standing = std::max({standing, it->standing, session_standing::returning});
        detach_locked(it);
        it->data = data;
        it->expires = expires;
        it->bytes = cost(id, data);
    } else {
        held_.push_back(entry{std::string(id), data, expires, cost(id, data), standing});
        index_.emplace(held_.front().id, held_.begin());
    }
    if (place_locked(standing)) return;
    // No room among the established ones that this session may take: it waits on probation.
    if (standing == session_standing::returning && place_locked(session_standing::fresh)) return;
    const auto bytes = held_.front().bytes;
    index_.erase(held_.front().id);
    held_.clear();
    throw std::length_error("sessions: a session of " + std::to_string(bytes) +
                            " bytes is larger than the in-memory store's room for it "
                            "(max_store_bytes)");
}

void memory_session_store::erase(std::string_view id) {
    const std::lock_guard lock(mutex_);
    const auto found = index_.find(id);
    if (found != index_.end()) remove_locked(found->second);
}

std::size_t memory_session_store::size() const {
    const std::lock_guard lock(mutex_);
    return fresh_.size() + returning_.size() + rotated_.size();
}

std::size_t memory_session_store::bytes() const {
    const std::lock_guard lock(mutex_);
    return fresh_bytes_ + returning_bytes_ + rotated_bytes_;
}

std::optional<session_standing> memory_session_store::standing(std::string_view id) const {
    const std::lock_guard lock(mutex_);
    const auto found = index_.find(id);
    if (found == index_.end()) return std::nullopt;
    return found->second->standing;
}

memory_session_store::list& memory_session_store::list_of(session_standing s) noexcept {
    switch (s) {
        case session_standing::fresh:
            return fresh_;
        case session_standing::returning:
            return returning_;
        case session_standing::rotated:
            break;
    }
    return rotated_;
}

std::size_t& memory_session_store::bytes_of(session_standing s) noexcept {
    switch (s) {
        case session_standing::fresh:
            return fresh_bytes_;
        case session_standing::returning:
            return returning_bytes_;
        case session_standing::rotated:
            break;
    }
    return rotated_bytes_;
}

void memory_session_store::detach_locked(list::iterator it) {
    bytes_of(it->standing) -= it->bytes;
    held_.splice(held_.begin(), list_of(it->standing), it);
}

bool memory_session_store::place_locked(session_standing standing) {
    const auto bytes = held_.front().bytes;
    const bool fresh = standing == session_standing::fresh;
    // What stays whatever is evicted: nothing on probation, where a new session evicts
    // fresh ones; among the established, a returning session evicts only returning ones,
    // a rotated one (a log-in) rotated ones too.
    const bool keeps_rotated = standing == session_standing::returning;
    const std::size_t kept_sessions = keeps_rotated ? rotated_.size() : 0;
    const std::size_t kept_bytes = keeps_rotated ? rotated_bytes_ : 0;
    const auto max_sessions = fresh ? probation_sessions_ : established_sessions_;
    const auto max_bytes = fresh ? probation_bytes_ : established_bytes_;
    if (kept_sessions >= max_sessions || kept_bytes + bytes > max_bytes) return false;

    const auto sessions_now = [&] {
        return fresh ? fresh_.size() : returning_.size() + rotated_.size();
    };
    const auto bytes_now = [&] { return fresh ? fresh_bytes_ : returning_bytes_ + rotated_bytes_; };
    while (sessions_now() >= max_sessions || bytes_now() + bytes > max_bytes) {
        auto& from = fresh ? fresh_ : !returning_.empty() ? returning_ : rotated_;
        remove_locked(std::prev(from.end()));
    }
    const auto it = held_.begin();
    it->standing = standing;
    bytes_of(standing) += bytes;
    auto& to = list_of(standing);
    to.splice(to.begin(), held_, it);
    return true;
}

void memory_session_store::remove_locked(list::iterator it) {
    index_.erase(it->id);
    bytes_of(it->standing) -= it->bytes;
    list_of(it->standing).erase(it);
}

void memory_session_store::sweep_locked(std::chrono::system_clock::time_point now) {
    for (auto* l : {&fresh_, &returning_, &rotated_}) {
        for (std::size_t i = 0; i < sweep_batch && !l->empty(); ++i) {
            const auto last = std::prev(l->end());
            if (last->expires > now) break;
            remove_locked(last);
        }
    }
}

}  // namespace tern::detail

#include "web/memory_session_store.hpp"

#include <iterator>
#include <stdexcept>
#include <utility>

namespace tern::detail {

memory_session_store::memory_session_store(std::size_t max_sessions, session_clock now)
    : max_(max_sessions), now_(std::move(now)) {
    if (max_ == 0) throw std::invalid_argument("sessions: max_sessions must be at least 1");
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
    lru_.splice(lru_.begin(), lru_, it);
    return it->data;
}

void memory_session_store::save(std::string_view id, const session_data& data,
                                std::chrono::system_clock::time_point expires) {
    const auto now = now_();
    const std::lock_guard lock(mutex_);
    sweep_locked(now);
    const auto found = index_.find(id);
    if (found != index_.end()) {
        const auto it = found->second;
        it->data = data;
        it->expires = expires;
        lru_.splice(lru_.begin(), lru_, it);
        return;
    }
    if (lru_.size() >= max_) remove_locked(std::prev(lru_.end()));
    lru_.push_front(entry{std::string(id), data, expires});
    index_.emplace(lru_.front().id, lru_.begin());
}

void memory_session_store::erase(std::string_view id) {
    const std::lock_guard lock(mutex_);
    const auto found = index_.find(id);
    if (found != index_.end()) remove_locked(found->second);
}

std::size_t memory_session_store::size() const {
    const std::lock_guard lock(mutex_);
    return lru_.size();
}

void memory_session_store::remove_locked(list::iterator it) {
    index_.erase(it->id);
    lru_.erase(it);
}

void memory_session_store::sweep_locked(std::chrono::system_clock::time_point now) {
    for (std::size_t i = 0; i < sweep_batch && !lru_.empty(); ++i) {
        const auto last = std::prev(lru_.end());
        if (last->expires > now) return;
        remove_locked(last);
    }
}

}  // namespace tern::detail

#pragma once
// tern's own session store: in memory, bounded, safe from every thread.

#include <tern/session.hpp>

#include <chrono>
#include <cstddef>
#include <functional>
#include <list>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

namespace tern::detail {

/// The clock sessions are timed by (injected by the tests).
using session_clock = std::function<std::chrono::system_clock::time_point()>;

/// Sessions in memory, at most `max_sessions`: a new one when full evicts the least
/// recently used (loaded or saved) session. Why evict rather than refuse: refusing would let
/// whoever fills the store lock every later user out of logging in; evicting costs the
/// longest-idle user their session. Expired sessions go lazily (a load finds them expired)
/// and by a bounded sweep on each save: up to `sweep_batch` expired sessions at the least
/// recently used end. One mutex guards it, taken only by requests that use sessions (a
/// request that never calls ctx.session() never touches it); it is held for a lookup and a
/// copy of one session's values.
class memory_session_store final : public session_store {
public:
    /// Expired sessions removed at most per save.
    static constexpr std::size_t sweep_batch = 8;

    /// A store of at most `max_sessions` (at least 1) timed by `now`.
    memory_session_store(std::size_t max_sessions, session_clock now);

    std::optional<session_data> load(std::string_view id) override;
    void save(std::string_view id, const session_data& data,
              std::chrono::system_clock::time_point expires) override;
    void erase(std::string_view id) override;

    /// Sessions held now (expired ones not yet removed included).
    std::size_t size() const;

private:
    struct entry {
        std::string id;
        session_data data;
        std::chrono::system_clock::time_point expires;
    };
    using list = std::list<entry>;

    void remove_locked(list::iterator it);
    void sweep_locked(std::chrono::system_clock::time_point now);

    const std::size_t max_;
    const session_clock now_;
    mutable std::mutex mutex_;
    list lru_;  // front: most recently used
    // Keys view the ids in `lru_`, whose nodes never move.
    std::unordered_map<std::string_view, list::iterator> index_;
};

}  // namespace tern::detail

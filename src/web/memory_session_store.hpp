#pragma once
// tern's own session store: in memory, bounded in sessions and in bytes, safe from every
// thread, and built so that a flood of new sessions evicts only new sessions.

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

/// How far a session has come, which decides what it may evict (docs/sessions.md, "Under a
/// flood"). It rises with use; a session that finds no room among the established ones
/// stays (or goes back) on probation.
enum class session_standing : unsigned char {
    fresh,      // saved by one request only: on probation
    returning,  // saved again by a later request (its cookie came back)
    rotated,    // given a new id by regenerate() (a log-in)
};

/// Sessions in memory: a segmented LRU bounded in sessions and in (estimated) bytes.
///
/// - *Probation* holds fresh sessions: an eighth of `max_sessions` and of `max_bytes`. A new
///   session that does not fit there evicts the least recently used fresh session, never
///   another: however many sessions a client makes, it cannot evict an established one.
/// - *Established* sessions (returning or rotated) hold the rest. One that needs room
///   evicts the least recently used returning session; only a rotated session (a log-in)
///   may also evict a rotated one. A session promoted from probation when no returning
///   session is left to evict stays on probation (at its front).
///
/// Why evict rather than refuse: refusing would let whoever fills the store lock every later
/// user out of logging in. Expired sessions go lazily (a load finds them expired) and by a
/// bounded sweep on each save: up to `sweep_batch` expired sessions at the least recently
/// used end of each list. One mutex guards it, taken only by requests that use sessions; it
/// is held for a lookup and a copy of one session's values.
class memory_session_store final : public session_store {
public:
    /// Expired sessions removed at most per list per save.
    static constexpr std::size_t sweep_batch = 8;
    /// Bytes counted for a session besides its id, keys and values: its list and hash
    /// nodes, its map and the allocator's headers (measured on glibc, rounded up).
    static constexpr std::size_t session_overhead = 256;
    /// Bytes counted for each value besides its key and value: its map node.
    static constexpr std::size_t value_overhead = 96;

    /// A store of at most `max_sessions` (at least 2) sessions and `max_bytes` (at least
    /// 64 KiB) bytes, timed by `now`; std::invalid_argument otherwise.
    memory_session_store(std::size_t max_sessions, std::size_t max_bytes, session_clock now);

    std::optional<session_data> load(std::string_view id) override;
    /// Saves as a fresh session (a new id) or a returning one (an id it holds).
    void save(std::string_view id, const session_data& data,
              std::chrono::system_clock::time_point expires) override;
    /// Saves as `save(id, data, expires)`; `rotated`: the session was given this id by
    /// regenerate(), which makes it established at once. A session too large for the room
    /// its standing may use throws std::length_error (and is not kept).
    void save(std::string_view id, const session_data& data,
              std::chrono::system_clock::time_point expires, bool rotated);
    void erase(std::string_view id) override;

    /// Sessions held now (expired ones not yet removed included).
    std::size_t size() const;
    /// Bytes counted for the sessions held now.
    std::size_t bytes() const;
    /// The standing of the session `id`, if the store holds it (for the tests).
    std::optional<session_standing> standing(std::string_view id) const;

    /// The bytes counted for a session with id `id` and `data`.
    static std::size_t cost(std::string_view id, const session_data& data) noexcept;

private:
    struct entry {
        std::string id;
        session_data data;
        std::chrono::system_clock::time_point expires;
        std::size_t bytes = 0;
        session_standing standing = session_standing::fresh;
    };
    using list = std::list<entry>;

    list& list_of(session_standing s) noexcept;
    std::size_t& bytes_of(session_standing s) noexcept;
    // Takes `it` out of its list into `held_` (the index still finds it), uncounted.
    void detach_locked(list::iterator it);
    // Puts the entry in `held_` at the front of `standing`'s list, first evicting what that
    // standing may evict to make room; false, evicting nothing, when even that would not
    // make room.
    bool place_locked(session_standing standing);
    void remove_locked(list::iterator it);
    void sweep_locked(std::chrono::system_clock::time_point now);

    const session_clock now_;
    // Probation: the fresh sessions; established: the returning and rotated ones.
    const std::size_t probation_sessions_;
    const std::size_t probation_bytes_;
    const std::size_t established_sessions_;
    const std::size_t established_bytes_;
    mutable std::mutex mutex_;
    // One list per standing, front: most recently used; and the bytes each holds.
    list fresh_;
    list returning_;
    list rotated_;
    std::size_t fresh_bytes_ = 0;
    std::size_t returning_bytes_ = 0;
    std::size_t rotated_bytes_ = 0;
    list held_;  // the one entry a save is placing, between lists
    // Keys view the ids in the lists, whose nodes never move (splice keeps them).
    std::unordered_map<std::string_view, list::iterator> index_;
};

}  // namespace tern::detail

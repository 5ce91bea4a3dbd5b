#pragma once
/// @file session.hpp
/// Server-side sessions (docs/sessions.md): the settings (tern/session_config.hpp), the data of one
/// session, the store interface for keeping sessions elsewhere (SQLite, Redis), and
/// `tern::session`, what `ctx.session()` returns.

#include <tern/cookie.hpp>
#include <tern/export.hpp>
#include <tern/session_config.hpp>

#include <chrono>
#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace tern {

namespace detail {
struct session_access;
}  // namespace detail

/// What a session holds: its values and its two timestamps (wall-clock, so that a store
/// that outlives the process keeps them meaningful).
struct session_data {
    /// The session's values, by key.
    std::map<std::string, std::string, std::less<>> values;
    /// When the session was made; with `session_config::absolute_timeout` it ends then.
    std::chrono::system_clock::time_point created{};
    /// When a request last used it; with `session_config::idle_timeout` it ends then.
    std::chrono::system_clock::time_point last_access{};
};

/// Where sessions are kept, by id. tern's own (the default) keeps them in memory, bounded by
/// `session_config::max_sessions` and `max_store_bytes`; implement this to keep them in
/// SQLite, Redis... A store with a capacity must not let new sessions evict established
/// ones (docs/sessions.md, "Under a flood").
///
/// Threading: tern calls a store from the event-loop threads (and from the blocking pool
/// for `tern::blocking` handlers), several at once, so an implementation must be safe to
/// call from many threads. A call blocks its event loop while it runs: a store doing I/O
/// must be fast (a local Redis), or the routes using sessions should be `tern::blocking`.
/// tern calls the store only for requests whose handlers call `ctx.session()`.
/// An exception thrown by `load` reaches the handler that called `ctx.session()`; one
/// thrown by `save` or `erase` turns the response into a 500 (logged on stderr).
class TERN_API session_store {
public:
    /// Destroys the store.
    virtual ~session_store();
    /// The session saved under `id`, or std::nullopt when there is none. tern checks the
    /// timestamps itself and erases a session that has expired, so a store may return one.
    virtual std::optional<session_data> load(std::string_view id) = 0;
    /// Saves `data` under `id` (replacing what was there). After `expires` the session is
    /// of no use any more (tern will not adopt it): a store may drop it then (a Redis TTL).
    virtual void save(std::string_view id, const session_data& data,
                      std::chrono::system_clock::time_point expires) = 0;
    /// Forgets the session `id`; nothing happens when there is none.
    virtual void erase(std::string_view id) = 0;

protected:
    /// For implementations.
    session_store() = default;
    /// For implementations.
    session_store(const session_store&) = default;
    /// For implementations.
    session_store& operator=(const session_store&) = default;
};

/// One request's session, from `ctx.session()`: string values by key. Changes are saved
/// when the handler chain (after filters included) has run, and the session cookie is sent
/// only when the session was made, changed, regenerated or invalidated. Not thread-safe:
/// use it from the request's handlers, as the context.
class TERN_API session {
public:
    /// A session belongs to one request: not copied.
    session(const session&) = delete;
    /// Not assigned either.
    session& operator=(const session&) = delete;
    /// Destroys this request's view (the stored session stays).
    ~session();

    /// The value under `key`; std::nullopt when absent.
    std::optional<std::string> get(std::string_view key) const;
    /// The value under `key`, or `fallback` when absent.
    std::string get(std::string_view key, std::string_view fallback) const;
    /// Whether `key` has a value.
    bool contains(std::string_view key) const;
    /// Every value, by key.
    const std::map<std::string, std::string, std::less<>>& values() const noexcept;
    /// Sets `key` to `value`. On a new session this gives it an id (32 random bytes from
    /// OpenSSL; a failure of the random generator throws std::runtime_error, a 500).
    session& set(std::string_view key, std::string value);
    /// Removes `key`; false when it had no value.
    bool erase(std::string_view key);
    /// True when the request brought no live session (no cookie, or one naming a session
    /// that is unknown, expired or malformed): this session starts empty.
    bool is_new() const noexcept;
    /// Gives the session a new id, keeping its values; the old id stops working. Call it
    /// when the user's privileges change (log-in), against session fixation.
    void regenerate();
    /// Ends the session (log-out): its values are gone, its id stops working, and the
    /// response clears the cookie (`Max-Age=0`). A value set afterwards starts a new session
    /// with a new id.
    void invalidate();

private:
    friend struct detail::session_access;
    session() = default;

    std::string id_;         // empty: no id yet (a new session nothing was stored in)
    std::string stored_id_;  // the id of the live session the request brought, if any
    session_data data_;
    bool changed_ = false;       // saved with a cookie at the end of the chain
    bool clear_cookie_ = false;  // invalidated: the response clears the cookie
    bool regenerated_ = false;   // given its id by regenerate(): established at once
};

}  // namespace tern

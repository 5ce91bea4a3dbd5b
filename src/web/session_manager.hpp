#pragma once
// Sessions, transport-free: which session a request's cookies name, and what is saved and
// which Set-Cookie goes out when the request is done (docs/sessions.md).

#include "web/memory_session_store.hpp"

#include <tern/header_field.hpp>
#include <tern/session.hpp>

#include <memory>
#include <optional>
#include <span>
#include <string>

namespace tern::detail {

/// The pieces of tern::session its manager reads and writes.
struct session_access {
    static std::string& id(session& s) noexcept { return s.id_; }
    static std::string& stored_id(session& s) noexcept { return s.stored_id_; }
    static session_data& data(session& s) noexcept { return s.data_; }
    static bool& changed(session& s) noexcept { return s.changed_; }
    static bool& clear_cookie(session& s) noexcept { return s.clear_cookie_; }
    static bool regenerated(const session& s) noexcept { return s.regenerated_; }
    static std::unique_ptr<session> make() { return std::unique_ptr<session>(new session()); }
};

/// Throws std::invalid_argument naming what is wrong with `cfg`: a cookie name that is not
/// a token, a timeout not above zero, max_sessions under 2 or max_store_bytes under 64 KiB
/// (without a store of one's own),
/// SameSite=None without secure = true, a path or domain a cookie cannot carry.
void check_session_config(const session_config& cfg);

/// One app's sessions: its settings and its store.
class session_manager {
public:
    /// Checks `cfg` (as check_session_config) and makes the in-memory store when `cfg` names
    /// none; sessions are timed by `now`.
    explicit session_manager(
        session_config cfg, session_clock now = [] { return std::chrono::system_clock::now(); });

    /// The session the request's Cookie headers name: the first cookie named
    /// `cookie_name` (of at most four) whose value is shaped like an id, which the store
    /// knows and which has not expired; else a new, empty session. An expired one is
    /// erased. Never adopts an id the store does not know (session fixation). Store
    /// exceptions pass through.
    std::unique_ptr<session> open(std::span<const header_field> request_headers) const;

    /// Ends the request's use of `s`: erases the ids it left (regenerate, invalidate), saves
    /// it when it has an id (its last_access now: a session only read is kept alive; in
    /// tern's own store, a regenerated one as established at once), and
    /// returns the Set-Cookie value to send when the session was made, changed, regenerated
    /// or invalidated (nothing otherwise). `secure`: the request came over TLS. Store
    /// exceptions pass through.
    std::optional<std::string> commit(session& s, bool secure) const;

    /// The settings.
    const session_config& config() const noexcept { return cfg_; }

private:
    session_config cfg_;
    session_clock now_;
    std::shared_ptr<session_store> store_;
    memory_session_store* memory_ = nullptr;  // store_, when it is tern's own
};

}  // namespace tern::detail

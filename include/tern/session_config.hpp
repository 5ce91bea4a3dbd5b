#pragma once
/// @file session_config.hpp
/// The settings of sessions (`config::sessions`, `app::sessions`; docs/sessions.md), apart
/// from the session API itself (`tern/session.hpp`), so that `tern/config.hpp` depends on no
/// feature's interface.

#include <tern/cookie.hpp>

#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>

namespace tern {

class session_store;

/// Sessions (see `app::sessions`, docs/sessions.md). The session id travels in a cookie that
/// is always HttpOnly; the defaults are the safe ones.
struct session_config {
    /// Name of the cookie that carries the session id (an RFC 9110 token).
    std::string cookie_name = "tern_session";
    /// A session no request has used for this long has ended (the next request gets a new,
    /// empty one). More than zero.
    std::chrono::seconds idle_timeout{30 * 60};
    /// A session ends this long after it was made, however often it is used. More than zero.
    std::chrono::seconds absolute_timeout{12 * 60 * 60};
    /// Sessions the in-memory store keeps at most. New sessions hold at most an eighth of
    /// it and evict only each other; sessions whose cookie came back or that were
    /// regenerated hold the rest (docs/sessions.md, "Under a flood"). At least 2; unused with
    /// a `store` of your own.
    std::size_t max_sessions = 100'000;
    /// Bytes the in-memory store keeps at most (ids, keys, values and an estimate of its
    /// bookkeeping), shared as `max_sessions` is; a session larger than its share makes the
    /// save fail (a 500). At least 65536; unused with a `store` of your own.
    std::size_t max_store_bytes = 64 * 1024 * 1024;
    /// `Path` of the cookie.
    std::string cookie_path = "/";
    /// `Domain` of the cookie; empty (the default): none, the cookie stays on this host.
    std::string cookie_domain;
    /// `SameSite` of the cookie; None needs `secure` set to true.
    tern::same_site same_site = tern::same_site::lax;
    /// `Secure`: unset (the default) sets it when the request came over TLS
    /// (`ctx.scheme() == "https"`); true always (behind a TLS-terminating proxy); false never.
    std::optional<bool> secure;
    /// false (the default): a browser-session cookie (no Max-Age), gone when the browser
    /// closes; true: `Max-Age` = `absolute_timeout`.
    bool persistent = false;
    /// Where sessions are kept; null (the default): in memory, bounded by `max_sessions` and
    /// `max_store_bytes`.
    std::shared_ptr<session_store> store;
};

}  // namespace tern

#pragma once
/// @file request_timeout.hpp
/// A time limit on a route's answer (docs/request-timeouts.md).

#include <tern/export.hpp>
#include <tern/handler.hpp>

#include <chrono>

namespace tern {

/// A before filter that gives the handler `limit` to answer, from the moment the filter runs,
/// e.g. `app.before("/reports/*", tern::request_timeout(std::chrono::seconds(2)))`. An answer
/// still missing then (a deferred response, a coroutine, a handler that returned late) is
/// replaced by `status` (503 Service Unavailable by default; 500..599), shaped by
/// `app.error(status, ...)` like tern's other errors, the same on HTTP/1.1, HTTP/2 and
/// HTTP/3. The handler sees the cancellation as when the client leaves: `deferred::cancelled()`
/// turns true, its `on_cancel` runs, a pending descriptor wait (`tern::wait_readable`,
/// `when_readable`) ends as `cancelled`, and a completion after the deadline is refused
/// (returns false), so nothing of the late answer is written. A handler that runs on the
/// event loop, or a `tern::blocking` one, cannot be interrupted: its answer, when it comes
/// late, is replaced then. Several limits on one request: the earliest wins. Throws
/// std::invalid_argument when `limit` is not positive or `status` is outside 500..599.
TERN_API handler request_timeout(std::chrono::milliseconds limit, int status = 503);

}  // namespace tern

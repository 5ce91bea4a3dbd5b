#pragma once
// Runs one request through the routes: match, handler, error mapping. Transport-free:
// strings in, a filled `response` out.

#include "routing/exchange.hpp"
#include "routing/router.hpp"
#include "static/static_files.hpp"

namespace tern::detail {

/// Routes `ex.req` and fills `ex.res`: the handler's result; for GET and HEAD without a
/// route, the static file from `files` (may be null) if one matches; 404 for an unknown
/// path; 405 + Allow when the path exists for other methods; 204 + Allow for OPTIONS
/// without an explicit route; the status and message of a thrown `http_error`; 500 for
/// any other exception. Never throws.
void dispatch(const router& routes, const static_files* files, exchange& ex) noexcept;

}  // namespace tern::detail

#pragma once
// Saving a request's session when its handler chain is done (see context_session.cpp).

#include "handling/exchange.hpp"

namespace tern::detail {

/// Saves the session the request used (`ctx.session()`), if any, and adds its Set-Cookie
/// when one is due. A store that throws turns the response into tern's 500 (logged). Runs
/// after the after filters, before error shaping. Never throws.
void commit_session(exchange& ex) noexcept;

}  // namespace tern::detail

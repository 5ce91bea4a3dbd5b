#pragma once
// The handler behind app.ws(pattern, setup): the opening handshake (after the before
// filters, so they may refuse the upgrade with an ordinary HTTP answer), then the 101 whose
// response carries the detail::ws_connection the connection switches to.

#include <tern/handler.hpp>
#include <tern/websocket.hpp>

#include <memory>

namespace tern::detail {

/// A GET route handler that answers a valid WebSocket upgrade with 101 and the
/// detail::ws_connection, and anything else with the handshake's refusal (400, 403, 405 or 426).
handler ws_route(std::shared_ptr<const ws_handlers::parts> route);

}  // namespace tern::detail

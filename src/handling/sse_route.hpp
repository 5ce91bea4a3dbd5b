#pragma once
// The handler behind app.sse(pattern, h): the text/event-stream head, an endless stream
// with keep-alive comments, and the client handle given to `h`.

#include <tern/handler.hpp>
#include <tern/sse.hpp>

namespace tern::detail {

/// A route handler that answers with an event stream and calls `h` with its client.
handler sse_route(sse_handler h);

}  // namespace tern::detail

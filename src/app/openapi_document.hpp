#pragma once
// The OpenAPI 3.1 document of an app's routes (docs/openapi.md), built from the route table
// and what `tern::documented` attached. Transport-free: tests/unit/app/test_openapi.cpp builds
// documents from a router without sockets.

#include <tern/openapi.hpp>

#include "routing/router.hpp"

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

namespace tern::detail {

/// What routes said about themselves, by (method, pattern as registered).
using route_docs =
    std::map<std::pair<std::string, std::string>, std::shared_ptr<const api_doc>, std::less<>>;

/// What an `app.sse` route says of itself: a GET answered 200 with `text/event-stream`. One
/// immutable instance shared by every such route.
const std::shared_ptr<const api_doc>& sse_doc();
/// What an `app.ws` route says of itself: a GET answered 101 (the WebSocket upgrade).
const std::shared_ptr<const api_doc>& ws_doc();

/// Throws std::invalid_argument when `doc` declares a path parameter that `pattern` does not
/// capture, or one twice: checked when the route is added, so a document never names a
/// parameter its path lacks.
void check_doc_against_pattern(const api_doc& doc, std::string_view pattern);

/// The OpenAPI path template of a route pattern (`/users/{id}`): `{name}` stays, `<name>`
/// becomes `{name}`, and each `*` a parameter named `wildcard` (then `wildcard2`, ...); a
/// trailing slash goes.
std::string openapi_path(std::string_view pattern);

/// The whole document: `openapi`, `info`, and one Path Item per route path holding an
/// Operation per route whose method OpenAPI names (GET, PUT, POST, DELETE, OPTIONS, HEAD,
/// PATCH, TRACE), less the hidden ones; then `info.extra` merged over the top level.
json openapi_document(const router& routes, const route_docs& docs, const openapi_info& info);

}  // namespace tern::detail

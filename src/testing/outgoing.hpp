#pragma once
// A request as the client puts it on the wire, whatever the protocol: its method, target and
// body, and the fields the client adds to it (default headers, the call's own, the jar's
// Cookie). Host and the body's framing are each protocol's to add.

#include <tern/testing.hpp>

#include <string_view>

namespace tern::testing::detail {

/// One request ready to send. The views point into the caller's data, alive until the
/// exchange returns.
struct outgoing_request {
    std::string_view method;
    std::string_view target;
    std::string_view body;
    header_list fields;  // in order: defaults, the call's extra fields, Cookie
};

/// True when `fields` holds one named `name` (case-insensitive).
bool has_field(const header_list& fields, std::string_view name);

/// True when the request carries a Content-Length the client adds: a body, or a method that
/// expects one (POST, PUT, PATCH: "Content-Length: 0"), unless the fields frame it already.
bool adds_content_length(const outgoing_request& request);

}  // namespace tern::testing::detail

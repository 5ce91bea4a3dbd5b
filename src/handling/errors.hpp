#pragma once
// Turning failures into responses: the app's exception mappers, its error(status)
// handlers, and tern's own error bodies (plain text, or JSON for clients that prefer it).
// Transport-free.

#include "http/request.hpp"
#include "http/response.hpp"

#include <tern/context.hpp>
#include <tern/detail/exception_mapper.hpp>

#include <span>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace tern::detail {

/// The `app::exception<E>` mappers, kept most derived first so the first match wins.
class exception_mappers {
public:
    /// Adds `m`, replacing a mapper for the same type, and placing it before every mapper
    /// for one of its base classes.
    void add(exception_mapper m);
    /// Inside a catch block: runs the first mapper matching the exception being handled
    /// and returns true; false when none does. An http_error is left to tern (false)
    /// unless the matching mapper is for http_error or a type derived from it. Exceptions
    /// the mapper throws propagate.
    bool handle_current(context& ctx, bool is_http_error) const;

private:
    std::vector<exception_mapper> mappers_;
};

/// Sets a response tern made for an error: `status`, `message` as a plain-text body. Header
/// fields set so far (by filters, say) stay.
void set_error(response& res, int status, std::string_view message);

/// Whether the client prefers JSON to plain text by its Accept fields (RFC 9110 12.5.1):
/// application/json (or a +json type) weighs more than text/plain; "*/*" and no Accept
/// leave text.
bool prefers_json(std::span<const header_field> headers) noexcept;

/// Rewrites the plain-text error body `set_error` made as an RFC 9457-style JSON document:
/// {"status":404,"title":"Not Found","detail":"<message>"} with Content-Type
/// application/problem+json ("detail" omitted when the message is the reason phrase).
/// With `fields` (a tern::validation_error's), an "errors" member lists them by field in
/// place of "detail": {"errors":{"n":["must be positive"]},"status":400,...}.
void render_json_error(response& res, const field_errors& fields = {});

}  // namespace tern::detail

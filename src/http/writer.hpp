#pragma once
// Serializes responses into a connection's output buffer (appending, so responses to
// pipelined requests accumulate and go out in one write).

#include "http/response.hpp"

#include <string>
#include <string_view>

namespace tern::detail {

/// How a response is framed on the wire.
struct framing {
    bool omit_body = false;       ///< HEAD: headers (with Content-Length) but no body bytes
    bool close = false;           ///< send `Connection: close` (the connection closes after it)
    bool keep_alive_1_0 = false;  ///< HTTP/1.0 client that asked for keep-alive: say so
};

/// Appends `res` to `out` as an HTTP/1.1 response with Date, Content-Length (except where
/// the status forbids a body), Content-Type when set and there is a body, Connection when
/// needed, then the user's fields and the body. A file body is not appended: its
/// Content-Length is written and the caller sends the file after these bytes.
void write_response(std::string& out, const response& res, const framing& how);

/// Appends the interim `HTTP/1.1 100 Continue` response.
void write_continue(std::string& out);

/// Appends a complete plain-text error response with `Connection: close`, for requests that
/// could not be parsed (no handler ran). `extra` is inserted verbatim as header lines, each
/// ending in CRLF (e.g. "Retry-After: 1\r\n").
void write_error_response(std::string& out, int status, std::string_view extra = {});

}  // namespace tern::detail

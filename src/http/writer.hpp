#pragma once
// Serializes responses into a connection's output buffer (appending, so responses to
// pipelined requests accumulate and go out in one write).

#include "http/response.hpp"

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tern::detail {

/// How a response is framed on the wire.
struct framing {
    bool omit_body = false;       ///< HEAD: headers (with Content-Length) but no body bytes
    bool close = false;           ///< send `Connection: close` (the connection closes after it)
    bool keep_alive_1_0 = false;  ///< HTTP/1.0 client that asked for keep-alive: say so
    /// A streamed body (`res.source`) is sent in chunks: `Transfer-Encoding: chunked`. When
    /// false, a streamed body is delimited by the close (HTTP/1.0; `close` must be set).
    bool chunked = false;
    /// Send `res.trailers` (HTTP/1.1, not for a HEAD; the caller sets it only when there are
    /// some): a body in memory goes out chunked, with them in its last chunk (RFC 9112
    /// 7.1.2), instead of with a Content-Length. A streamed body's come with its last chunk
    /// (`write_last_chunk`).
    bool trailers = false;
};

/// Appends `res` to `out` as an HTTP/1.1 response with Date, Content-Length (except where
/// the status forbids a body), Content-Type when set and there is a body, Connection when
/// needed, then the user's fields and the body. A file body is not appended: its
/// Content-Length is written and the caller sends the file after these bytes.
void write_response(std::string& out, const response& res, const framing& how);

/// A streamed response (`res.source` set) gets no Content-Length and no body here: the
/// caller sends the body after the head, framed as `how.chunked` says.
///
/// Appends the interim `HTTP/1.1 100 Continue` response.
void write_continue(std::string& out);

/// Chunked framing of a streamed body (RFC 9112 7.1), filled in place: `begin_chunk`
/// reserves a chunk-size line at the end of `out` and returns where; the caller appends the
/// chunk's data; `end_chunk` writes the size (or takes the reservation back when nothing was
/// appended) and the CRLF after the data.
std::size_t begin_chunk(std::string& out);
void end_chunk(std::string& out, std::size_t at);
/// Appends the last chunk (`0`) and the empty trailer section that end a chunked body.
void write_last_chunk(std::string& out);
/// Appends the last chunk and a trailer section of `trailers` (RFC 9112 7.1.2).
void write_last_chunk(std::string& out,
                      const std::vector<std::pair<std::string, std::string>>& trailers);

/// Appends a complete plain-text error response with `Connection: close`, for requests that
/// could not be parsed (no handler ran). `extra` is inserted verbatim as header lines, each
/// ending in CRLF (e.g. "Retry-After: 1\r\n").
void write_error_response(std::string& out, int status, std::string_view extra = {});

}  // namespace tern::detail

#pragma once
// Reads one HTTP/1.1 response off a stream, plain or TLS (RFC 9112): the status line, the header
// fields, then the body framed by Transfer-Encoding: chunked, Content-Length or the close
// (section 6.3), or no body for HEAD, 1xx, 204 and 304. Interim 1xx responses are skipped.
// The head alone, the body after it and a chunked body one chunk at a time are there too,
// for the readers of responses that do not end (an event stream) or end in an upgrade.

#include <tern/testing.hpp>

#include "testing/stream.hpp"

#include <string>
#include <string_view>

namespace tern::testing::detail {

/// Thrown when the peer closed the connection before the first byte of a response: on a
/// reused keep-alive connection the client sends the request again on a new one.
struct closed_before_response {};

/// One read response and whether the connection may carry another request.
struct read_result {
    tern::testing::response response;
    bool keep_alive = false;
};

/// Reads the response to a request with `method` from `s`, `buffer` holding bytes already
/// received (what is left over stays there). Throws client_error for a malformed response
/// or a close in its middle, timeout_error past `deadline`, closed_before_response when the
/// peer closed before sending anything.
read_result read_response(stream& s, std::string& buffer, std::string_view method,
                          clock::time_point deadline);

/// A response head: the status line and the fields.
struct head_result {
    tern::testing::response response;  // without a body yet
    bool http10 = false;               // the status line said HTTP/1.0
};

/// Reads the head of the next response from `s` (interim 1xx skipped; a 101 is returned),
/// `buffer` holding bytes already received; what follows the head stays in `buffer`.
/// Errors as read_response.
head_result read_head(stream& s, std::string& buffer, clock::time_point deadline);

/// Reads the body of the response whose head is `head` into `head.response.body` (and a
/// chunked trailer into its headers), framed as read_response frames it; returns whether the
/// connection may carry another request.
bool read_body(stream& s, std::string& buffer, std::string_view method, head_result& head,
               clock::time_point deadline);

/// For a reader refused with an ordinary response (not the stream or upgrade it asked for):
/// reads what comes of its body within half a second (or until `deadline`; a read error
/// ends it early, the refusal being the error to report) and returns `what` followed by the
/// start of that body, quoted (at most 200 bytes).
std::string describe_refusal(stream& s, std::string& buffer, head_result& head, std::string what,
                             clock::time_point deadline);

/// Reads the next chunk of a chunked body and appends its data to `out`: false at the last
/// chunk (its trailer is read and dropped). Consumes nothing from `buffer` until a whole
/// chunk is there, so after a timeout_error the next call goes on where this one stopped.
/// closed_before_response when the peer closed between two chunks, client_error when it
/// closed in the middle of one or the framing is malformed.
bool read_chunk(stream& s, std::string& buffer, std::string& out, clock::time_point deadline);

/// True when `a` and `b` are equal ignoring ASCII case.
bool iequals(std::string_view a, std::string_view b) noexcept;

/// True when the comma-separated list `value` holds `token` (case-insensitive), e.g.
/// `Connection: keep-alive, Upgrade` holds "upgrade".
bool has_token(std::string_view value, std::string_view token) noexcept;

}  // namespace tern::testing::detail

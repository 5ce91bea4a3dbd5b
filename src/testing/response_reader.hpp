#pragma once
// Reads one HTTP/1.1 response off a socket (RFC 9112): the status line, the header fields,
// then the body framed by Transfer-Encoding: chunked, Content-Length or the close
// (section 6.3), or no body for HEAD, 1xx, 204 and 304. Interim 1xx responses are skipped.

#include <tern/testing.hpp>

#include "testing/socket.hpp"

#include <string>

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
read_result read_response(socket& s, std::string& buffer, std::string_view method,
                          clock::time_point deadline);

/// True when `a` and `b` are equal ignoring ASCII case.
bool iequals(std::string_view a, std::string_view b) noexcept;

}  // namespace tern::testing::detail

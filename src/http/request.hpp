#pragma once
// One parsed request. Its strings view a per-connection buffer that is reused (capacity
// kept, up to a bound) from request to request, so steady-state parsing does not allocate.

#include <tern/header_field.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tern::detail {

class spooled_body;  // http/spooled_body.hpp
class body_port;     // http/exchange_port.hpp

/// A request as the parser produced it. Views stay valid until `clear()`.
struct request {
    std::string_view method;  ///< e.g. "GET"
    std::string_view target;  ///< request-target as sent: path and query
    std::string_view path;    ///< target up to '?'
    std::string_view query;   ///< after '?', empty when none
    std::uint8_t version_major = 1;
    std::uint8_t version_minor = 1;
    std::vector<header_field> headers;  ///< in order received
    /// Fields after the body (a chunked HTTP/1.1 body's trailer section, HTTP/2's and
    /// HTTP/3's trailing HEADERS), in order received; they view `trailer_storage`.
    std::vector<header_field> trailers;
    std::string body;  ///< de-chunked body (empty when spooled)
    /// A large body kept in a temporary file instead of `body` (config::spool_body_above).
    std::shared_ptr<spooled_body> spooled;
    /// A streamed body (tern::streamed_body over HTTP/1.1): where its pieces come from.
    /// Empty when the body was read whole (into `body` or `spooled`).
    std::weak_ptr<body_port> body_stream;
    bool keep_alive = true;  ///< the client allows another request after this one
    bool is_head = false;    ///< method is HEAD (the response omits its body)
    bool secure = false;     ///< it came over TLS (set by the connection)
    /// The verified client certificate's subject (mutual TLS), empty without one.
    std::string client_subject;

    /// Bytes the views above point into: method, target, header names and values.
    std::string storage;
    /// Bytes the trailer views point into (apart from `storage`, whose views are built
    /// before the trailers arrive and must not move).
    std::string trailer_storage;

    /// The body, wherever it is kept (memory, or the spooled file's mapping).
    std::string_view body_view() const noexcept;
    /// The first header named `name` (ASCII case-insensitive), or nullopt.
    std::optional<std::string_view> header(std::string_view name) const noexcept;
    /// The first trailer field named `name` (ASCII case-insensitive), or nullopt.
    std::optional<std::string_view> trailer(std::string_view name) const noexcept;
    /// Empties the request, keeping buffer capacity for the next one up to
    /// `retained_buffer_capacity` (http/buffers.hpp).
    void clear() noexcept;
};

/// Makes `to` a copy of `from` whose views point into `to`'s own storage: for a request that
/// outlives the connection's per-request buffers (a held response).
void copy_request(const request& from, request& to);
/// A view into `from`'s storage moved to the same place in `to`'s (after copy_request); a
/// view elsewhere (static text) is returned as it is.
std::string_view rebase(std::string_view v, const request& from, const request& to) noexcept;

}  // namespace tern::detail

#pragma once
// A response as handlers build it: set, not sent. The writer serializes it once, after the
// handler chain returns.

#include "http/buffers.hpp"
#include "http/file_handle.hpp"

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace tern::detail {

class body_source;        // http/exchange_port.hpp
class upgraded_protocol;  // http/exchange_port.hpp

/// A body sent from an open file: `length` bytes from `offset`.
struct file_body {
    file_handle file;
    std::uint64_t offset = 0;
    std::uint64_t length = 0;
};

/// The response of one exchange. Reused per connection; `clear()` keeps capacity up to
/// `retained_buffer_capacity`.
struct response {
    int status = 200;
    std::string content_type;                                 ///< empty: no Content-Type
    std::vector<std::pair<std::string, std::string>> fields;  ///< user-set header fields
    /// Fields sent after the body (`ctx.trailer`), names lower-case: HTTP/1.1 sends the body
    /// chunked with them in its last chunk, HTTP/2 and HTTP/3 a trailing HEADERS. A
    /// streamed body's own (`response_stream::trailer`) join them when it ends.
    std::vector<std::pair<std::string, std::string>> trailers;
    std::string body;
    file_body file;      ///< when `file.file` is set, the body comes from it, not `body`
    bool close = false;  ///< the handler layer asks for the connection to close after this
    /// When set, the body is streamed from it after the head (no Content-Length): chunked
    /// on HTTP/1.1, close-delimited on HTTP/1.0. `body` and `file` are unused then.
    std::shared_ptr<body_source> source;
    /// With status 101: the protocol the connection carries once this head is written.
    std::shared_ptr<upgraded_protocol> upgrade;

    void clear() noexcept {
        status = 200;
        content_type.clear();
        fields.clear();
        trailers.clear();
        clear_buffer(body);
        file = file_body{};
        close = false;
        source.reset();
        upgrade.reset();
    }
};

}  // namespace tern::detail

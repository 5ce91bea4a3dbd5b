#pragma once
// The response parser: llhttp (>= 9.2, strict) in response mode, for tern::client. It shares
// the request parser's head accounting (http/message_head.hpp: field spans over one storage
// string, the line, header-size and header-count limits, trailers counted against them) and
// stops where a client has to decide: after each head and at the message's end. Body bytes
// are appended to `body()` as they arrive, for the caller to keep or take (streaming); their
// total is bounded by `max_body_size` before anything is appended past it.

#include <tern/header_field.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace tern::detail {

/// Why a response could not be read.
enum class response_error {
    none = 0,
    malformed,         ///< not HTTP/1.x, status 101 or outside 100..599, or llhttp refused it
    line_too_long,     ///< status line over max_line_size
    header_too_large,  ///< header (or trailer) bytes over max_header_size
    too_many_headers,  ///< header (or trailer) fields over max_header_count
    body_too_large,    ///< body bytes over max_body_size (Content-Length or as they arrive)
    bad_framing,       ///< Transfer-Encoding not ending in one chunked (or in HTTP/1.0), or with
                       ///< Content-Length; two Content-Length fields, or one that is not a number
    truncated,         ///< the connection ended inside a head or a framed body
    chunk_extension_too_long,  ///< over 4 KiB of chunk extensions in one response
};

/// Names `e` for messages ("response header too large").
std::string_view describe(response_error e) noexcept;

/// The limits the response parser enforces.
struct response_limits {
    std::size_t max_line_size = 8 * 1024;     ///< the status line
    std::size_t max_header_size = 64 * 1024;  ///< the header block (as the request parser counts)
    std::size_t max_header_count = 100;
    std::uint64_t max_body_size = std::uint64_t{64} * 1024 * 1024;
};

/// One response head. Views stay valid until the next `expect()`; those of an interim (1xx)
/// head, until the next head begins.
struct response_head {
    int status = 0;
    std::uint8_t version_major = 1;
    std::uint8_t version_minor = 1;
    std::string_view reason;
    std::vector<header_field> headers;  ///< in order received; values without surrounding OWS
    std::string storage;                ///< what the views point into
};

/// Parses the responses of one client connection, one at a time. Errors are final.
class response_parser {
public:
    enum class event {
        need_more,  ///< all bytes consumed; neither a head nor the end was reached
        head,       ///< `head()` is complete (an interim 1xx or the final one); feed on
        complete,   ///< the final response ended; bytes after `consumed` are not its
        error,      ///< see `error()`
    };
    struct result {
        event what;
        std::size_t consumed;  ///< bytes of the input used
    };

    explicit response_parser(const response_limits& limits);
    ~response_parser();
    response_parser(const response_parser&) = delete;
    response_parser& operator=(const response_parser&) = delete;

    /// Before each request's response: `head_request` says the request was HEAD (no body
    /// follows, whatever the head says). Forgets the previous response. For the start of a
    /// connection and after `complete`; in the middle of a response it fails the parser
    /// (`malformed`), since the bytes that follow do not start a response.
    void expect(bool head_request) noexcept;
    /// Parses from `data`. Stops after every head (1xx ones too: their `complete` is not
    /// reported; feeding on parses the next head) and after the final response's end. After
    /// a final head, feed the bytes that follow it even when there are none (an empty
    /// `data`): a response without a body (HEAD, 204, 304, Content-Length: 0) completes on
    /// that call. After `complete`, feeding again without `expect()` reports `complete` with
    /// nothing consumed.
    result feed(std::string_view data);
    /// The peer closed the connection: `complete` when the body was delimited by the close
    /// (no Content-Length, not chunked) or the response had ended (a final head without a
    /// body counts), else `error` with `truncated` (or the earlier error). Consumes nothing.
    result finish();

    /// The last head parsed (after `event::head`).
    const response_head& head() const noexcept;
    /// Body bytes not yet taken by the caller (de-chunked). The caller may clear it.
    std::string& body() noexcept;
    /// Body bytes of this response so far, taken or not.
    std::uint64_t body_bytes() const noexcept;
    /// After `complete`: the connection may carry another request (HTTP/1.1 without
    /// `Connection: close`, a framed body, and no interim head that said close).
    bool keep_alive() const noexcept;
    response_error error() const noexcept;

private:
    struct state;
    std::unique_ptr<state> state_;
};

}  // namespace tern::detail

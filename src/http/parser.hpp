#pragma once
// The request parser: llhttp (>= 9.2, strict: every lenient flag off) behind a small
// transport-free interface. Bytes in, requests and error codes out. Limits are counted as
// bytes arrive, before anything is buffered past them.

#include "http/request.hpp"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>
#include <system_error>

namespace tern::detail {

class spool_quota;

/// How a request's body is read: its limit, and whether the route reads it itself, piece by
/// piece (tern::streamed_body), instead of having it whole before the handler runs.
struct body_plan {
    std::size_t limit = 0;
    bool streamed = false;
};

/// Decides a request's body limit when its head is complete (a route's own limit).
class body_planner {
public:
    /// The most body bytes `head` may carry.
    virtual std::size_t body_limit(const request& head) const noexcept = 0;
    /// The limit and whether the body is streamed (HTTP/1's parser asks this; the others
    /// read every body whole and ask `body_limit`).
    virtual body_plan plan_body(const request& head) const noexcept {
        return {body_limit(head), false};
    }

protected:
    ~body_planner() = default;
};

/// The limits the parser enforces (see tern::config for meanings and defaults).
struct parser_limits {
    std::size_t max_body_size = 10 * 1024 * 1024;
    /// Asked for each request with a body; null: max_body_size for all.
    const body_planner* planner = nullptr;
    /// Bodies over this many bytes go to a temporary file (0: never).
    std::size_t spool_body_above = 0;
    /// Where (empty: $TMPDIR, else /tmp). Views text that outlives the parser (the config).
    std::string_view spool_directory;
    /// The server's bound on spooled bytes (null: none); owned by a shared_ptr elsewhere.
    spool_quota* spool_space = nullptr;
    std::size_t max_header_count = 100;
    std::size_t max_header_size = 8 * 1024;
    std::size_t max_line_size = 8 * 1024;
    std::size_t max_empty_lines = 10;
};

/// Parses a stream of requests on one connection. Feed it bytes as they arrive; it stops
/// after each complete request so the caller can answer it before parsing the next one
/// (pipelined requests are answered in order). Errors are final: once `feed` reports one,
/// the stream is never resynchronised.
class request_parser {
public:
    enum class event {
        need_more,  ///< all bytes consumed; the request is not complete yet
        request,    ///< `current()` is complete; bytes after `consumed` belong to the next one
        error,      ///< the stream is invalid; see `error()`
        /// The head of a request whose body is streamed (body_plan::streamed) is complete:
        /// answer it; feeding again then gives its body a piece at a time.
        head,
        /// A piece of a streamed body is in `piece()` (it views the input); bytes after
        /// `consumed` follow it. The last piece may come with `request` instead.
        piece,
    };
    struct result {
        event what;
        std::size_t consumed;  ///< bytes of the input used
    };

    explicit request_parser(const parser_limits& limits);
    ~request_parser();
    request_parser(const request_parser&) = delete;
    request_parser& operator=(const request_parser&) = delete;

    /// Parses from `data`. After `event::request`, call `next()` before feeding again.
    result feed(std::string_view data);
    /// The request being parsed (complete after `event::request`).
    request& current() noexcept;
    /// The request as far as it was parsed, for a refusal: once the headers are complete,
    /// all of it; before that, the request line when it arrived whole and was a valid
    /// HTTP/1.x line (method, target, version; else empty views), and the header fields
    /// whose value was complete. Valid until the parser is fed or reset again.
    request& parsed_so_far();
    /// Forgets the completed request and gets ready for the next one.
    void next() noexcept;
    /// Forgets the completed request and gives back the memory kept for the next one's
    /// head: the connection carries another protocol now (a WebSocket), so no HTTP follows.
    void release() noexcept;
    /// Why parsing failed (after `event::error`).
    std::error_code error() const noexcept;
    /// Bytes of a request have arrived but the request is not complete.
    bool in_progress() const noexcept;
    /// The current request's headers are complete and its body is being read.
    bool reading_body() const noexcept;
    /// The client asked for `100 Continue`, no body byte has arrived, and none was sent.
    bool wants_continue() const noexcept;
    /// Records that `100 Continue` was sent.
    void continue_sent() noexcept;
    /// The current request's body is streamed (its head came as `event::head`).
    bool streaming() const noexcept;
    /// The streamed body bytes the last feed found (empty when none): a view of its input.
    std::string_view piece() const noexcept;
    /// Bytes of a streamed body still to come when its length is known (Content-Length),
    /// else -1 (chunked).
    std::int64_t body_left() const noexcept;

private:
    struct state;
    std::unique_ptr<state> state_;
};

}  // namespace tern::detail

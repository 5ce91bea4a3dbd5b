#pragma once
/// @file stream.hpp
/// A response body written in pieces while it is sent (`context::stream`).

#include <tern/export.hpp>

#include <functional>
#include <memory>
#include <string_view>

namespace tern {

namespace detail {
class streamed_body;
struct stream_token;
}  // namespace detail

/// The writing end of a streamed response body (`context::stream()`), usable from any
/// thread. The head goes out when the handler chain has finished; the body follows in
/// pieces as they are written: chunked on HTTP/1.1, up to the close on HTTP/1.0.
///
/// Backpressure: `write` returns false once `streams_config::buffer_size` bytes wait for the
/// client; wait for `on_writable` before writing more. A producer that ignores it is cut
/// off at `streams_config::max_buffer` (the stream is aborted), so a slow client never makes
/// the server hold more than that. Copies refer to the same stream; when the last copy is
/// gone without `end()`, the stream is aborted: the connection closes without the final
/// chunk, so the client sees the body incomplete. (Call `end()` when the body is complete,
/// even when it was all written in the handler.)
class TERN_API response_stream {
public:
    /// An empty handle.
    response_stream() noexcept = default;

    /// Queues `bytes` for the client. True while the queue is below
    /// `streams_config::buffer_size`; false when it is at or above it (the bytes were taken:
    /// wait for `on_writable`), or when the stream is over (`closed()`; nothing was taken).
    bool write(std::string_view bytes) const;
    /// The body is complete: what was written goes out, then the end of the body.
    void end() const;
    /// Cuts the body off: what is still queued is dropped and the connection closes at once,
    /// without completing the body.
    void abort() const;
    /// True once nothing more will be sent: the body ended or was cut off, the client left,
    /// the write deadline passed, or the request was a HEAD (head only).
    bool closed() const noexcept;
    /// Sets a trailer field sent when the stream ends (`end()`); same rules as
    /// `context::trailer` (it replaces an earlier one of that name; what that refuses throws
    /// std::invalid_argument). It goes in the last chunk over HTTP/1.1, a trailing HEADERS
    /// frame over HTTP/2 and HTTP/3; HTTP/1.0 gets none. It joins those set with
    /// `context::trailer` and wins over one of the same name. Set after `end()`, or on a
    /// stream cut off, it is not sent.
    void trailer(std::string_view name, std::string_view value) const;
    /// Runs `fn` on the connection's thread each time the queue drains below
    /// `streams_config::buffer_size` after a `write` returned false.
    void on_writable(std::function<void()> fn) const;
    /// Runs `fn` once when the stream is over (see `closed`), on the connection's thread (at
    /// once, on this thread, when it is over already). A producer stops there.
    void on_close(std::function<void()> fn) const;
    /// Whether this handle refers to a stream.
    explicit operator bool() const noexcept { return token_ != nullptr; }

    /// Built by `context::stream`.
    explicit response_stream(std::shared_ptr<detail::streamed_body> source);

private:
    std::shared_ptr<detail::stream_token> token_;
};

}  // namespace tern

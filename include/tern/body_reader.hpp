#pragma once
/// @file body_reader.hpp
/// A request body read piece by piece as it arrives (`tern::streamed_body`,
/// `context::body_reader`; docs/uploads.md).

#include <tern/export.hpp>

#include <coroutine>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string_view>
#include <system_error>
#include <type_traits>

namespace tern {

/// Why the reading of a streamed body ended before its end (`body_error::reason`, and the
/// `std::error_code` of `body_reader::next`'s callback form, compared as
/// `ec == tern::body_failure::idle`).
enum class body_failure {
    client_left = 1,  ///< the connection closed (or the stream was reset), or the response
                      ///< was already sent: nothing more of this body is read
    too_large,        ///< the route's body limit passed: tern answers 413 itself
    idle,             ///< no byte within `timeouts.body_idle` while a piece was asked for:
                      ///< tern answers 408
    stopped,          ///< the server's stop: its grace period ended
};

/// The error category of `body_failure` ("tern.body").
TERN_API const std::error_category& body_category() noexcept;

/// A `std::error_code` for `f` in `body_category()`.
inline std::error_code make_error_code(body_failure f) noexcept {
    return {static_cast<int>(f), body_category()};
}

/// Thrown at `co_await body.next()` when the reading ends before the body's end.
class TERN_API body_error : public std::runtime_error {
public:
    /// An error for `why`, its message the category's.
    explicit body_error(body_failure why);
    /// Why the reading ended.
    body_failure reason() const noexcept { return reason_; }

private:
    body_failure reason_;
};

namespace detail {
class body_channel;
}  // namespace detail

/// A request body handed out piece by piece (`context::body_reader()`). On a route wrapped
/// in `tern::streamed_body` no body byte is taken from the network until `next` is called
/// (HTTP/1.1: the socket is not read; HTTP/2, HTTP/3: the stream's flow-control credit is not
/// given back), so the client's sends stall instead of the server's memory growing; on routes
/// that read bodies whole, the body is one piece. Loop thread only: call `next` from the
/// handler, a coroutine resumed on its loop, or a `next` callback. Copies share one body.
class TERN_API body_reader {
public:
    /// The callback of `next(fn)`: a piece (valid until the next call of `next`), or
    /// std::nullopt at the end with an empty code, or std::nullopt and a `body_failure`.
    using piece_fn = std::function<void(std::optional<std::string_view>, std::error_code)>;

    /// What `co_await body.next()` waits on: the next piece, std::nullopt at the end of the
    /// body; throws `body_error` when the reading ends first.
    class TERN_API next_piece {
    public:
        /// True when the piece (or the end) is there already.
        bool await_ready() const noexcept;
        /// Asks for the next piece; the coroutine resumes on its loop when it arrives (false:
        /// the answer is there at once).
        bool await_suspend(std::coroutine_handle<> h);
        /// The piece (valid until the next call of `next`), std::nullopt at the end; throws
        /// `body_error`.
        std::optional<std::string_view> await_resume();

    private:
        friend class body_reader;
        explicit next_piece(std::shared_ptr<detail::body_channel> c) noexcept;
        std::shared_ptr<detail::body_channel> channel_;
    };

    /// A reader of no body (its first `next` gives the end).
    body_reader() = default;
    /// The next piece, awaited in a coroutine handler. Asking is what lets the next bytes in;
    /// the first call also sends `100 Continue` when the client waits for it.
    next_piece next();
    /// The next piece, given to `fn` once (on the loop; at once when it is there already).
    /// `fn` must not throw: what it throws is only logged (the response is not failed for
    /// it, and nothing more is read until `next` is called again). Call `next` again from
    /// `fn` to go on.
    void next(piece_fn fn);

    /// Built by `context::body_reader`.
    explicit body_reader(std::shared_ptr<detail::body_channel> c) noexcept;

private:
    std::shared_ptr<detail::body_channel> channel_;
};

}  // namespace tern

template <>
struct std::is_error_code_enum<tern::body_failure> : std::true_type {};

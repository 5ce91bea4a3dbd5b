#pragma once
/// @file multipart_reader.hpp
/// A multipart/form-data request body read part by part as it arrives: each part's headers,
/// then its data in pieces, to a sink of the handler's choosing (docs/uploads.md, "Multipart,
/// as it arrives").

#include <tern/body_reader.hpp>
#include <tern/export.hpp>
#include <tern/http_error.hpp>

#include <coroutine>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>

namespace tern {

class context;

/// Why a `multipart_reader` refused the body (`multipart_error::reason`, and the
/// `std::error_code` of the callback forms, compared as `ec ==
/// tern::multipart_failure::malformed`).
enum class multipart_failure {
    malformed = 1,     ///< not a valid multipart/form-data body: 400
    too_many_parts,    ///< more than `multipart_options::max_parts` parts: 413
    header_too_large,  ///< a part's headers over `multipart_options::max_part_header_size`: 413
    file_too_large,    ///< a file part over `multipart_options::max_file_size`: 413
};

/// The error category of `multipart_failure` ("tern.multipart").
TERN_API const std::error_category& multipart_category() noexcept;

/// A `std::error_code` for `f` in `multipart_category()`.
inline std::error_code make_error_code(multipart_failure f) noexcept {
    return {static_cast<int>(f), multipart_category()};
}

/// Thrown at `co_await parts.next_part()` or `next_data()` when the body is refused: an
/// `http_error` whose status is 400 (malformed) or 413 (a limit), and whose message says what
/// was wrong, so that tern answers it when the handler lets it go.
class TERN_API multipart_error : public http_error {
public:
    /// An error for `why` with `message` as the response body.
    multipart_error(multipart_failure why, const std::string& message);
    /// Why the body was refused.
    multipart_failure reason() const noexcept { return reason_; }

private:
    multipart_failure reason_;
};

/// The limits of a `multipart_reader`; the defaults are those of `ctx.uploaded_file`.
struct multipart_options {
    /// Bytes of one part with a filename; more is `file_too_large` (413) as soon as the bytes
    /// pass it. 0 (the default): `limits_config::max_upload_file_size` (10 MiB).
    std::size_t max_file_size = 0;
    /// Parts in one body; one more is `too_many_parts` (413).
    std::size_t max_parts = 1000;
    /// Header bytes of one part (its empty line included); more is `header_too_large` (413).
    std::size_t max_part_header_size = 8 * 1024;
};

/// One part's headers, known before its data.
struct multipart_part {
    std::string field;     ///< the form field's name (Content-Disposition `name`)
    bool is_file = false;  ///< the part has a `filename` (or `filename*`), even empty
    std::string filename;  ///< safe to use as a path's last component, as `uploaded_file::filename`
    std::string raw_filename;  ///< as the client sent it (`filename*` decoded); empty for a field
    std::string content_type;  ///< the part's Content-Type; "text/plain" when absent
};

namespace detail {
class multipart_channel;
}  // namespace detail

/// A multipart/form-data request body read part by part as it arrives, over the request's
/// `body_reader` (on a `tern::streamed_body` route over HTTP/1.1 nothing is read from the
/// network until asked; elsewhere the body is already whole). Memory: one part's header
/// block and the delimiter's length; data pieces view the body reader's pieces. Loop thread
/// only, as `body_reader`; copies refer to the same reading. A failure is sticky: every later
/// call fails the same way.
class TERN_API multipart_reader {
public:
    /// The callback of `next_part(fn)`: a part, or std::nullopt at the end of the body with an
    /// empty code, or std::nullopt and a `multipart_failure` or `body_failure` code.
    using part_fn = std::function<void(std::optional<multipart_part>, std::error_code)>;

    /// What `co_await parts.next_part()` waits on.
    class TERN_API next_part_op {
    public:
        /// True when the answer is there already.
        bool await_ready() const noexcept;
        /// Reads on; the coroutine resumes on its loop with the answer (false: at once).
        bool await_suspend(std::coroutine_handle<> h);
        /// The next part, std::nullopt after the last; throws `multipart_error` or `body_error`.
        std::optional<multipart_part> await_resume();

    private:
        friend class multipart_reader;
        explicit next_part_op(std::shared_ptr<detail::multipart_channel> c) noexcept;
        std::shared_ptr<detail::multipart_channel> channel_;
    };

    /// What `co_await parts.next_data()` waits on.
    class TERN_API next_data_op {
    public:
        /// True when the answer is there already.
        bool await_ready() const noexcept;
        /// Reads on; the coroutine resumes on its loop with the answer (false: at once).
        bool await_suspend(std::coroutine_handle<> h);
        /// A piece of the part's data (valid until the next call on the reader), std::nullopt
        /// at the part's end; throws `multipart_error` or `body_error`.
        std::optional<std::string_view> await_resume();

    private:
        friend class multipart_reader;
        explicit next_data_op(std::shared_ptr<detail::multipart_channel> c) noexcept;
        std::shared_ptr<detail::multipart_channel> channel_;
    };

    /// Reads `ctx`'s body (`ctx.body_reader()`) as multipart/form-data within `options`.
    /// Throws `unsupported_media_type` (415) when the request is not multipart/form-data and
    /// `bad_request` (400) when its boundary parameter is missing or invalid.
    explicit multipart_reader(context& ctx, const multipart_options& options = {});

    /// The next part's headers, awaited; the rest of the current part's data, if any, is
    /// skipped. std::nullopt once the body has ended after its close delimiter (an epilogue
    /// is read and ignored).
    next_part_op next_part();
    /// The same, given to `fn` once (on the loop; at once when it is there already). `fn`
    /// must not throw (what it throws is only logged).
    void next_part(part_fn fn);
    /// The next piece of the current part's data, awaited (never empty), std::nullopt at the
    /// part's end, and also when no part is being read.
    next_data_op next_data();
    /// The same, given to `fn` once, as `body_reader::next(fn)` gives a piece.
    void next_data(body_reader::piece_fn fn);

private:
    std::shared_ptr<detail::multipart_channel> channel_;
};

}  // namespace tern

template <>
struct std::is_error_code_enum<tern::multipart_failure> : std::true_type {};

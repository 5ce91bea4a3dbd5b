#pragma once
// Transport and parse failures as std::error_code values. Nothing on the I/O or parse path
// throws; each failure carries the HTTP status the client is answered with.

#include <string_view>
#include <system_error>

namespace tern::detail {

/// Why a request could not be read. Each value maps to one response status (see
/// `status_of`), documented in docs/limits.md.
enum class error {
    bad_request = 1,           ///< malformed syntax (400)
    too_many_empty_lines,      ///< more than max_empty_lines CRLFs before a request (400)
    missing_host,              ///< HTTP/1.1 request without Host (400)
    duplicate_host,            ///< more than one Host field (400)
    bad_host,                  ///< Host value that is not host[:port] (400)
    duplicate_content_type,    ///< more than one Content-Type field (400)
    bad_transfer_encoding,     ///< Transfer-Encoding not ending in a single chunked (400)
    chunk_extension_too_long,  ///< over 4 KiB of chunk extensions in one request (400)
    unknown_transfer_coding,   ///< a coding other than chunked (501)
    line_too_long,             ///< request line over max_line_size (414)
    header_too_large,          ///< header bytes over max_header_size (431)
    too_many_headers,          ///< header fields over max_header_count (431)
    body_too_large,            ///< body over max_body_size (413)
    unsupported_expectation,   ///< Expect other than 100-continue (417)
    method_not_supported,      ///< CONNECT: tern is not a proxy (501)
    unknown_method,            ///< a method token llhttp does not know (501)
    version_not_supported,     ///< HTTP major version other than 1, or HTTP/2 preface (505)
    header_timeout,            ///< headers not complete within timeouts.header (408)
    body_timeout,              ///< body stalled longer than timeouts.body_idle (408)
    body_spool_failed,         ///< a large body could not be written to its temporary file (500)
    body_spool_full,           ///< the spool quota cannot hold a large body now (503)
};

/// The category of tern's parse and transport errors ("tern").
const std::error_category& error_category() noexcept;

/// Makes an error_code of tern's category.
inline std::error_code make_error_code(error e) noexcept {
    return {static_cast<int>(e), error_category()};
}

/// The HTTP status a client receives for `e`.
int status_of(error e) noexcept;

/// What the refusal's body and ctx.error_message() say when the status's reason phrase would
/// not: a failure of the server's own rather than of the request (a body that could not be
/// spooled: "request body could not be stored", docs/uploads.md; the spool quota: "request
/// body could not be stored now: the spool is full"). Empty otherwise.
std::string_view failure_message(error e) noexcept;

}  // namespace tern::detail

template <>
struct std::is_error_code_enum<tern::detail::error> : std::true_type {};

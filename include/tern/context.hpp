#pragma once
/// @file context.hpp
/// The request and response of one exchange, as a handler sees them.

#include <tern/export.hpp>

#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace tern {

namespace detail {
struct exchange;
}

/// One request header field. The views stay valid until the handler chain returns.
struct header_field {
    std::string_view name;   ///< As the client sent it (compare case-insensitively).
    std::string_view value;  ///< Without surrounding whitespace.
};

/// What a handler receives: read the request, set the response. Results are set, not
/// sent: `result`, `text` and `html` replace the body (the last call wins) and the
/// response is written once, after the handler returns. Setters return `*this`.
/// A context lives only for the duration of the handler chain; do not keep references.
class TERN_API context {
public:
    /// Built by the server for each request; not for users.
    explicit context(detail::exchange& ex) noexcept : ex_(ex) {}
    context(const context&) = delete;
    context& operator=(const context&) = delete;

    // ---- request ---------------------------------------------------------------------

    /// The request method as sent, e.g. "GET".
    std::string_view method() const noexcept;
    /// The request path without the query string, as sent (not percent-decoded).
    std::string_view path() const noexcept;
    /// The raw query string after '?', empty when there is none.
    std::string_view query_string() const noexcept;
    /// The value of path parameter `name` of the matched route (`{name}` or `<name>`),
    /// percent-decoded. Throws std::out_of_range when the route declares no such parameter.
    std::string_view path_param(std::string_view name) const;
    /// The first value of query parameter `name`, percent-decoded ('+' is a space);
    /// std::nullopt when absent.
    std::optional<std::string> query_param(std::string_view name) const;
    /// Every value of query parameter `name`, in order; empty when absent.
    std::vector<std::string> query_params(std::string_view name) const;
    /// The value of the first header field named `name` (case-insensitive); std::nullopt
    /// when absent.
    std::optional<std::string_view> header(std::string_view name) const noexcept;
    /// Every request header field, in the order received.
    std::span<const header_field> headers() const noexcept;
    /// The request body (de-chunked); empty when there is none.
    std::string_view body() const noexcept;
    /// The peer's IP address, e.g. "127.0.0.1" or "::1".
    std::string ip() const;

    // ---- response --------------------------------------------------------------------

    /// The response status; 200 unless set.
    int status() const noexcept;
    /// Sets the response status. Throws std::invalid_argument outside 100..999.
    context& status(int code);
    /// Sets the Content-Type of the response.
    context& content_type(std::string_view type);
    /// Sets response header `name` to `value`, replacing an earlier value of that name.
    /// Content-Length, Transfer-Encoding and Date are managed by tern and are refused with
    /// std::invalid_argument; so are names or values that would break the header block
    /// (CR, LF, NUL, or a name that is not an RFC 9110 token).
    context& header(std::string_view name, std::string_view value);
    /// The response body set so far.
    std::string_view result() const noexcept;
    /// Sets the response body; the Content-Type stays as set (none by default).
    context& result(std::string body);
    /// Sets the body and `Content-Type: text/plain; charset=utf-8`.
    context& text(std::string body);
    /// Sets the body and `Content-Type: text/html; charset=utf-8`.
    context& html(std::string body);

private:
    detail::exchange& ex_;
};

/// A request handler: reads the request from the context and sets the response.
using handler = std::function<void(context&)>;

}  // namespace tern

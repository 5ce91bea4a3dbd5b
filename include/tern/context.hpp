#pragma once
/// @file context.hpp
/// The request and response of one exchange, as a handler sees them.

#include <tern/cookie.hpp>
#include <tern/deferred.hpp>
#include <tern/detail/convert.hpp>
#include <tern/export.hpp>
#include <tern/handler.hpp>
#include <tern/header_field.hpp>
#include <tern/stream.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tern {

namespace detail {
struct exchange;
struct context_access;
/// The tag the JSON members of context default to.
struct json_tag;
/// Specialized by <tern/json.hpp>; using the JSON members of context without it is an error.
template <class Tag>
struct json_support {
    static_assert(sizeof(Tag*) == 0, "tern: include <tern/json.hpp> to use ctx.json and body_as");
};
}  // namespace detail

/// A file from a multipart/form-data request (see `context::uploaded_file`).
struct uploaded_file {
    std::string field;         ///< The form field it came in.
    std::string filename;      ///< A safe last path component made from the sent name.
    std::string raw_filename;  ///< The name as the client sent it: never use it as a path.
    std::string content_type;  ///< As the client declared it ("text/plain" when it did not).
    std::string_view content;  ///< The bytes; valid until the handler chain returns.
    /// The file's size in bytes.
    std::size_t size() const noexcept { return content.size(); }
};

/// What a handler receives: read the request, set the response. Results are set, not
/// sent: `result`, `text` and `html` replace the body (the last call wins) and the
/// response is written once, after the handler returns. Setters return `*this`.
/// A context lives only for the duration of the handler chain; do not keep references.
/// A response that outlives the handler: `defer()` (complete it later, from any thread) and
/// `stream()` (a body written in pieces), docs/async.md and docs/streaming.md.
class TERN_API context {
public:
    /// Built by the server for each request; not for users.
    explicit context(detail::exchange& ex) noexcept : ex_(&ex) {}
    context(const context&) = delete;
    context& operator=(const context&) = delete;

    // ---- request ---------------------------------------------------------------------

    /// The request method as sent, e.g. "GET".
    std::string_view method() const noexcept;
    /// The request path without the query string, as sent (not percent-decoded).
    std::string_view path() const noexcept;
    /// The protocol version as a string: "HTTP/1.1", "HTTP/1.0" or "HTTP/2".
    std::string_view protocol() const noexcept;
    /// The raw query string after '?', empty when there is none.
    std::string_view query_string() const noexcept;
    /// The value of path parameter `name` of the matched route (`{name}` or `<name>`),
    /// percent-decoded. Throws std::out_of_range when the route declares no such parameter.
    std::string_view path_param(std::string_view name) const;
    /// Path parameter `name` converted to T (integers, floating point, bool, std::string);
    /// a value that does not convert throws http_error 400 naming the parameter.
    template <class T>
    T path_param(std::string_view name) const {
        return converted<T>("path parameter", name, path_param(name));
    }
    /// The first value of query parameter `name`, percent-decoded ('+' is a space);
    /// std::nullopt when absent.
    std::optional<std::string> query_param(std::string_view name) const;
    /// Query parameter `name` converted to T, or `fallback` when absent; a value that does
    /// not convert throws http_error 400 naming the parameter (e.g. `?n=ten` for an int).
    template <class T>
    T query_param(std::string_view name, T fallback) const {
        auto text = query_param(name);
        return text ? converted<T>("query parameter", name, *text) : std::move(fallback);
    }
    /// Query parameter `name`, or `fallback` when absent: `ctx.query_param("q", "none")`.
    std::string query_param(std::string_view name, const char* fallback) const {
        return query_param<std::string>(name, fallback);
    }
    /// Every value of query parameter `name`, in order; empty when absent.
    std::vector<std::string> query_params(std::string_view name) const;
    /// The first value of form field `name` from an application/x-www-form-urlencoded body
    /// or a non-file part of a multipart/form-data body; std::nullopt when absent or when
    /// the body is neither. A malformed multipart body throws http_error 400.
    std::optional<std::string> form_param(std::string_view name) const;
    /// Form field `name` converted to T, or `fallback` when absent (400 when it does not
    /// convert).
    template <class T>
    T form_param(std::string_view name, T fallback) const {
        auto text = form_param(name);
        return text ? converted<T>("form field", name, *text) : std::move(fallback);
    }
    /// Form field `name`, or `fallback` when absent.
    std::string form_param(std::string_view name, const char* fallback) const {
        return form_param<std::string>(name, fallback);
    }
    /// Every value of form field `name`, in order; empty when absent.
    std::vector<std::string> form_params(std::string_view name) const;
    /// The first file uploaded in form field `name` of a multipart/form-data body;
    /// std::nullopt when there is none. A malformed body throws http_error 400, a file over
    /// `config::max_upload_file_size` http_error 413.
    std::optional<tern::uploaded_file> uploaded_file(std::string_view name) const;
    /// Every file uploaded in form field `name`, in order.
    std::vector<tern::uploaded_file> uploaded_files(std::string_view name) const;
    /// Every uploaded file of the request, in order.
    std::vector<tern::uploaded_file> uploaded_files() const;
    /// The value of cookie `name` from the Cookie header(s); std::nullopt when absent. When
    /// a name repeats, the first wins.
    std::optional<std::string_view> cookie(std::string_view name) const;
    /// Every cookie the client sent, as name/value pairs in order.
    std::vector<std::pair<std::string_view, std::string_view>> cookies() const;
    /// The value of the first header field named `name` (case-insensitive); std::nullopt
    /// when absent.
    std::optional<std::string_view> header(std::string_view name) const noexcept;
    /// Every request header field, in the order received.
    std::span<const header_field> headers() const noexcept;
    /// The request body (de-chunked); empty when there is none. A body over
    /// `config::spool_body_above` is kept in a temporary file, and this views it mapped
    /// read-only (docs/uploads.md).
    std::string_view body() const noexcept;
    /// The open temporary file of a body over `config::spool_body_above` (read it in pieces
    /// with pread(2), e.g. to hash or copy a large upload without touching all of it at
    /// once); -1 when the body is in memory. Valid as long as the request.
    int body_fd() const noexcept;
    /// The client's IP address, e.g. "127.0.0.1" or "::1": the peer's, or behind a trusted
    /// reverse proxy (`app::trusted_proxies`, docs/proxies.md) the client's that the proxies
    /// name in `Forwarded` or `X-Forwarded-For`.
    std::string ip() const;
    /// The IP address of the direct peer of the connection (a proxy's when behind one),
    /// whatever the forwarding headers say.
    std::string peer_ip() const;
    /// This request's id (`app::request_ids`, docs/logging.md); empty when ids are off.
    std::string_view request_id() const noexcept;
    /// "https" when the request came over TLS (docs/tls.md), else "http". The connection's
    /// own scheme: a proxy's X-Forwarded-Proto is an ordinary header.
    std::string_view scheme() const noexcept;
    /// The subject of the client's verified certificate under mutual TLS
    /// (`tls_config::client_certificates`), RFC 2253 ("CN=alice,O=Example"); empty when the
    /// client sent none (or without TLS).
    std::string_view client_certificate() const noexcept;

    // ---- response --------------------------------------------------------------------

    /// The response status; 200 unless set.
    int status() const noexcept;
    /// Sets the response status. Throws std::invalid_argument outside 200..999: a 1xx is
    /// interim, never a final response.
    context& status(int code);
    /// Sets the Content-Type of the response. Throws std::invalid_argument for a control
    /// character (HTAB aside).
    context& content_type(std::string_view type);
    /// Sets response header `name` to `value`, replacing an earlier value of that name.
    /// Content-Length, Transfer-Encoding and Date are managed by tern and are refused with
    /// std::invalid_argument; so are names or values that would break the header block
    /// (a control character other than HTAB in the value, RFC 9110 5.5, or a name that is
    /// not an RFC 9110 token).
    context& header(std::string_view name, std::string_view value);
    /// The response body set so far.
    std::string_view result() const noexcept;
    /// Sets the response body; the Content-Type stays as set (none by default).
    context& result(std::string body);
    /// Sets the body and `Content-Type: text/plain; charset=utf-8`.
    context& text(std::string body);
    /// Sets the body and `Content-Type: text/html; charset=utf-8`.
    context& html(std::string body);
    /// Serializes `value` with nlohmann_json (a `to_json` of the user's type works) and
    /// sets it as the body with `Content-Type: application/json`. Needs <tern/json.hpp>.
    template <class T, class Tag = detail::json_tag>
    context& json(const T& value) {
        return json_text(detail::json_support<Tag>::dump(value));
    }
    /// `ctx.json({{"id", 1}, {"name", "x"}})`: the same with a JSON literal.
    template <class Tag = detail::json_tag>
    context& json(typename detail::json_support<Tag>::initializer_list init) {
        return json_text(detail::json_support<Tag>::dump(init));
    }
    /// Sets an already serialized JSON document as the body, with
    /// `Content-Type: application/json`.
    context& json_text(std::string document);
    /// The request body parsed as JSON into a T (with the user's `from_json`). Malformed
    /// JSON (a NUL byte included), or JSON of the wrong shape for T, throws http_error 400
    /// saying what is wrong; a body over `config::max_json_size` 413, nesting deeper than
    /// `config::max_json_depth` 400 (both checked before parsing). Needs <tern/json.hpp>.
    template <class T, class Tag = detail::json_tag>
    T body_as() const {
        return detail::json_support<Tag>::template parse<T>(json_body());
    }
    /// Answers with a redirect to `location` (3xx `status`, 302 by default) and an empty
    /// body. In a before filter it also ends the request (as `skip_remaining`). Throws
    /// std::invalid_argument for a status outside 300..399 or a location with a control
    /// character.
    context& redirect(std::string_view location, int status = 302);
    /// Adds a `Set-Cookie` for `name`=`value`. Throws std::invalid_argument for a name
    /// that is not a token, a value with characters a cookie may not carry (encode it
    /// first, e.g. base64url), or SameSite=None without Secure.
    context& cookie(std::string_view name, std::string_view value,
                    const cookie_options& options = {});
    /// Tells the client to delete cookie `name`: an empty value with Max-Age=0 and an
    /// Expires in the past. `options` must name the same Path and Domain it was set with.
    context& remove_cookie(std::string_view name, const cookie_options& options = {});
    /// In a before filter: skip the remaining before filters and the handler (after
    /// filters still run). Elsewhere it has no effect.
    void skip_remaining() noexcept;
    /// Takes the response over: the handler may return before it is complete. Complete it
    /// later, from any thread, with the returned handle (see `tern::deferred`); this context
    /// goes on working until the handler returns, on the same response. Only in a route
    /// handler running on the event loop: elsewhere (filters, error handlers, the request
    /// logger, a `tern::blocking` handler, a second call) it throws std::logic_error.
    tern::deferred defer();
    /// Streams the body: the head (status, headers set before or after this call) goes out
    /// once the handler chain has finished, then what is written to the returned stream,
    /// from any thread, as it is written (see `tern::response_stream`). A body set later
    /// (`result`, `text`...) replaces the stream, which then reports `closed()`.
    tern::response_stream stream();
    /// Bytes of the response body as it will be sent (a file's length for static files;
    /// after compression in a request logger).
    std::uint64_t response_length() const noexcept;

private:
    friend struct detail::context_access;  // the pipeline's own handlers (SSE routes)

    template <class T>
    T converted(const char* kind, std::string_view name, std::string_view text) const {
        if (auto value = detail::convert_param<T>(text)) return std::move(*value);
        throw_bad_param(kind, name, text, detail::param_type_name<T>());
    }
    // The body for body_as, after the max_json_size and max_json_depth checks (which throw).
    std::string_view json_body() const;
    [[noreturn]] static void throw_bad_param(const char* kind, std::string_view name,
                                             std::string_view text, const char* expected);

    detail::exchange* ex_;
};

}  // namespace tern

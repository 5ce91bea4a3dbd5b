#pragma once
/// @file context.hpp
/// The request and response of one exchange, as a handler sees them.

#include <tern/body_reader.hpp>
#include <tern/cookie.hpp>
#include <tern/deferred.hpp>
#include <tern/detail/convert.hpp>
#include <tern/export.hpp>
#include <tern/handler.hpp>
#include <tern/header_field.hpp>
#include <tern/session.hpp>
#include <tern/stream.hpp>
#include <tern/validation.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <typeinfo>
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

/// Why a response is an error, as `context::error_cause()` tells an error handler (or an
/// after filter, or the request logger).
enum class error_cause {
    none,                ///< Not an error response (yet).
    no_route,            ///< 404: no route and no static file for the path.
    method_not_allowed,  ///< 405: the path has routes for other methods only.
    static_file,         ///< An error of the static-file layer (403, 404, 416...).
    thrown,              ///< A filter, handler or deferred completion threw (see error_message).
    status_set,          ///< The application set an error status without a body.
    refused,             ///< The connection refused the request: a limit, a malformed
                         ///< request, a timeout, a full blocking queue.
};

/// The tag of `context::header(name, value, tern::keep_on_error)`.
struct keep_on_error_t {
    /// Only `tern::keep_on_error` is meant to exist.
    explicit keep_on_error_t() = default;
};
/// Marks a response header to keep when the response is restarted for an error (see
/// `context::header`).
inline constexpr keep_on_error_t keep_on_error{};

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
    /// The protocol version as a string: "HTTP/1.1", "HTTP/1.0", "HTTP/2" or "HTTP/3".
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
    /// Query parameter `name` converted to T, as a validator to check it with
    /// (docs/validation.md): `ctx.query_param_as<int>("n").check(positive, "must be
    /// positive").get()`. Missing, unconvertible or failing, `get()` throws a 400 naming the
    /// parameter.
    template <class T>
    validator<T> query_param_as(std::string_view name) const {
        const auto text = query_param(name);
        return validator<T>::from_text(std::string(name), as_view(text));
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
    /// Form field `name` converted to T, as a validator (see `query_param_as`).
    template <class T>
    validator<T> form_param_as(std::string_view name) const {
        const auto text = form_param(name);
        return validator<T>::from_text(std::string(name), as_view(text));
    }
    /// Path parameter `name` converted to T, as a validator (see `query_param_as`). Throws
    /// std::out_of_range when the route declares no such parameter, as `path_param` does.
    template <class T>
    validator<T> path_param_as(std::string_view name) const {
        return validator<T>::from_text(std::string(name), path_param(name));
    }
    /// Every value of form field `name`, in order; empty when absent.
    std::vector<std::string> form_params(std::string_view name) const;
    /// The first file uploaded in form field `name` of a multipart/form-data body;
    /// std::nullopt when there is none. A malformed body throws http_error 400, a file over
    /// `limits_config::max_upload_file_size` http_error 413.
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
    /// Header field `name` converted to T, as a validator named `name` (see
    /// `query_param_as`).
    template <class T>
    validator<T> header_as(std::string_view name) const {
        return validator<T>::from_text(std::string(name), header(name));
    }
    /// Cookie `name` converted to T, as a validator (see `query_param_as`).
    template <class T>
    validator<T> cookie_as(std::string_view name) const {
        return validator<T>::from_text(std::string(name), cookie(name));
    }
    /// Every request header field, in the order received.
    std::span<const header_field> headers() const noexcept;
    /// The request body piece by piece (docs/uploads.md). On a route wrapped in
    /// tern::streamed_body over HTTP/1.1 it is read from the network as the reader asks;
    /// elsewhere the body was read whole and comes as one piece. Call it once per request.
    tern::body_reader body_reader();
    /// The value of the first request trailer field named `name` (case-insensitive);
    /// std::nullopt when absent. Trailers arrive after the body: complete when a handler runs
    /// (the body is read whole before it).
    std::optional<std::string_view> trailer(std::string_view name) const noexcept;
    /// Every request trailer field, in the order received.
    std::span<const header_field> trailers() const noexcept;
    /// The request body (de-chunked); empty when there is none. A body over
    /// `spool_config::body_above` is kept in a temporary file, and this views it mapped
    /// read-only (docs/uploads.md).
    std::string_view body() const noexcept;
    /// The open temporary file of a body over `spool_config::body_above` (read it in pieces
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
    /// Sets the response status. Throws std::invalid_argument outside 200..599: RFC 9110 15
    /// defines codes 100..599 only, and a 1xx is interim, never a final response.
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
    /// Adds a field line `name: value` after any earlier ones of that name, where `header`
    /// replaces: for fields that may repeat (Set-Cookie, Link, Vary), as a proxy passes an
    /// upstream's on. Refuses what `header` refuses; Content-Type and Connection, which a
    /// response carries once, are set as `header` sets them.
    context& add_header(std::string_view name, std::string_view value);
    /// Sets response header `name` to `value` as `header(name, value)` does, and keeps it on
    /// the response even when it is restarted for an error: a thrown exception (mapped or a
    /// 500) and a failed error handler start from a clean response that holds these fields
    /// only. For headers a before filter sets on every response (a request id, say).
    /// Content-Type and Connection cannot be kept (std::invalid_argument).
    context& header(std::string_view name, std::string_view value, keep_on_error_t);
    /// Sets response trailer `name` to `value` (replacing an earlier one of that name), sent
    /// after the body; refuses what header(name, value) refuses, and fields a trailer must not
    /// carry (RFC 9110 §6.5.1: framing, routing, authentication, Content-*, Host, ...) with
    /// std::invalid_argument. HTTP/1.1 then sends the body chunked, the trailers in its last
    /// chunk; HTTP/2 and HTTP/3 send them in a HEADERS frame after the body; HTTP/1.0 (and a
    /// HEAD, 204, 304 or file body) gets none. None by default (docs/trailers.md).
    context& trailer(std::string_view name, std::string_view value);
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
    /// saying what is wrong; a body over `limits_config::max_json_size` 413, nesting deeper than
    /// `limits_config::max_json_depth` 400 (both checked before parsing). Needs <tern/json.hpp>.
    template <class T, class Tag = detail::json_tag>
    T body_as() const {
        return detail::json_support<Tag>::template parse<T>(json_body());
    }
    /// The JSON body as a validator of T named "body", for checks over the whole object:
    /// `ctx.body_validator<todo>().check("title", has_title, "must not be empty").get()`.
    /// An empty body is missing ("is required"); malformed JSON or JSON of the wrong shape
    /// for T is an error of "body" (so `tern::require_valid` reports it beside other
    /// fields); a body over `limits_config::max_json_size` still throws 413. Needs <tern/json.hpp>.
    template <class T, class Tag = detail::json_tag>
    validator<T> body_validator() const {
        if (body().empty()) return validator<T>("body", std::nullopt);
        try {
            return validator<T>("body", body_as<T, Tag>());
        } catch (const http_error& e) {
            if (e.status() != 400) throw;
            return validator<T>::failed("body", e.what());
        }
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
    /// The value of the signed cookie `name` (set with `set_signed_cookie` under the app's
    /// `cookie_secret`); std::nullopt when absent or when its signature does not verify (a
    /// changed value reads as absent). Throws std::logic_error without `app.cookie_secret`.
    std::optional<std::string> signed_cookie(std::string_view name) const;
    /// Adds a `Set-Cookie` for `name` carrying `value` (any bytes) and an HMAC-SHA256 of both
    /// under the app's `cookie_secret` (docs/sessions.md): the client can read it but not
    /// change it. Throws as `cookie`, and std::logic_error without `app.cookie_secret`.
    context& set_signed_cookie(std::string_view name, std::string_view value,
                               const cookie_options& options = {});
    /// This request's session (docs/sessions.md): the one its cookie names, or a new, empty
    /// one. Loaded from the store by the first call; saved, and its cookie sent when needed,
    /// once the after filters have run. Throws std::logic_error (a 500) when the app has no
    /// `app.sessions(...)`.
    tern::session& session();
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
    /// Why the response is an error: a routing 404 (`no_route`) or a thrown `not_found`
    /// (`thrown`), say. `error_cause::none` while the response is not one tern shaped as an
    /// error. For error handlers, after filters and request loggers (docs/errors.md).
    tern::error_cause error_cause() const noexcept;
    /// With `error_cause::thrown`: the exception's `what()` (an http_error's message, or
    /// the text of the std::exception behind a 500, which is never sent unless you send
    /// it); empty for other causes and for exceptions that are not std::exceptions.
    std::string_view error_message() const noexcept;
    /// Stores `value` under `name` for the rest of this request (a before filter hands the
    /// authenticated user to the handler), replacing what `name` held. Released when the
    /// response is complete.
    template <class T>
    context& attribute(std::string_view name, T value) {
        using stored = std::decay_t<T>;
        set_attribute(name, std::make_shared<stored>(std::move(value)), typeid(stored));
        return *this;
    }
    /// The value stored under `name` by `attribute(name, value)`; null when there is none
    /// or it is not a T.
    template <class T>
    T* attribute(std::string_view name) const {
        return static_cast<T*>(find_attribute(name, typeid(T)));
    }
    /// Bytes of the response body as it will be sent (a file's length for static files;
    /// after compression in a request logger).
    std::uint64_t response_length() const noexcept;

private:
    friend struct detail::context_access;  // the handling layer's own handlers (SSE routes)

    static std::optional<std::string_view> as_view(const std::optional<std::string>& text) {
        if (!text) return std::nullopt;
        return std::string_view(*text);
    }
    template <class T>
    T converted(const char* kind, std::string_view name, std::string_view text) const {
        if (auto value = detail::convert_param<T>(text)) return std::move(*value);
        throw_bad_param(kind, name, text, detail::param_type_name<T>());
    }
    void set_attribute(std::string_view name, std::shared_ptr<void> value,
                       const std::type_info& type);
    // header (add false: replaces a field of that name) and add_header (add true).
    context& set_header(std::string_view name, std::string_view value, bool add);
    void* find_attribute(std::string_view name, const std::type_info& type) const noexcept;
    // The body for body_as, after the max_json_size and max_json_depth checks (which throw).
    std::string_view json_body() const;
    [[noreturn]] static void throw_bad_param(const char* kind, std::string_view name,
                                             std::string_view text, const char* expected);

    detail::exchange* ex_;
};

}  // namespace tern

#pragma once
/// @file http_error.hpp
/// The exceptions a handler throws to answer with a given status.

#include <tern/export.hpp>

#include <stdexcept>
#include <string>

namespace tern {

/// Thrown from a handler or filter to end the request with `status` and `message` as the
/// body (plain text, or JSON when the client prefers it; see docs/errors.md). Any other
/// exception escaping a handler goes to the `app::exception` mappers, then becomes a 500.
class TERN_API http_error : public std::runtime_error {
public:
    /// `status` must be 400..599; anything else is reported as 500.
    http_error(int status, const std::string& message)
        : std::runtime_error(message), status_(status >= 400 && status <= 599 ? status : 500) {}

    /// The HTTP status the response carries.
    int status() const noexcept { return status_; }

private:
    int status_;
};

/// 400: the request is malformed or fails validation.
struct TERN_API bad_request : http_error {
    /// With `message` as the body.
    explicit bad_request(const std::string& message = "Bad Request") : http_error(400, message) {}
};

/// 401: credentials are missing or wrong.
struct TERN_API unauthorized : http_error {
    /// With `message` as the body.
    explicit unauthorized(const std::string& message = "Unauthorized") : http_error(401, message) {}
};

/// 403: the client is known but not allowed.
struct TERN_API forbidden : http_error {
    /// With `message` as the body.
    explicit forbidden(const std::string& message = "Forbidden") : http_error(403, message) {}
};

/// 404: no such resource.
struct TERN_API not_found : http_error {
    /// With `message` as the body.
    explicit not_found(const std::string& message = "Not Found") : http_error(404, message) {}
};

/// 409: the request conflicts with the resource's current state.
struct TERN_API conflict : http_error {
    /// With `message` as the body.
    explicit conflict(const std::string& message = "Conflict") : http_error(409, message) {}
};

/// 410: the resource existed and is gone for good.
struct TERN_API gone : http_error {
    /// With `message` as the body.
    explicit gone(const std::string& message = "Gone") : http_error(410, message) {}
};

/// 413: the request content is larger than the server accepts.
struct TERN_API content_too_large : http_error {
    /// With `message` as the body.
    explicit content_too_large(const std::string& message = "Content Too Large")
        : http_error(413, message) {}
};

/// 415: the request content is in a format the resource does not take.
struct TERN_API unsupported_media_type : http_error {
    /// With `message` as the body.
    explicit unsupported_media_type(const std::string& message = "Unsupported Media Type")
        : http_error(415, message) {}
};

/// 422: well-formed content that cannot be processed (e.g. fails validation).
struct TERN_API unprocessable_content : http_error {
    /// With `message` as the body.
    explicit unprocessable_content(const std::string& message = "Unprocessable Content")
        : http_error(422, message) {}
};

/// 429: the client sent too many requests.
struct TERN_API too_many_requests : http_error {
    /// With `message` as the body.
    explicit too_many_requests(const std::string& message = "Too Many Requests")
        : http_error(429, message) {}
};

/// 500: the server failed.
struct TERN_API internal_server_error : http_error {
    /// With `message` as the body.
    explicit internal_server_error(const std::string& message = "Internal Server Error")
        : http_error(500, message) {}
};

/// 503: the server cannot answer now.
struct TERN_API service_unavailable : http_error {
    /// With `message` as the body.
    explicit service_unavailable(const std::string& message = "Service Unavailable")
        : http_error(503, message) {}
};

}  // namespace tern

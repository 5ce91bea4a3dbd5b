#pragma once
/// @file http_error.hpp
/// The exceptions a handler throws to answer with a given status.

#include <tern/export.hpp>

#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tern {

/// Thrown from a handler or filter to end the request with `status` and `message` as the
/// body (plain text, or JSON when the client prefers it; see docs/errors.md). Any other
/// exception escaping a handler goes to the `app::exception` mappers, then becomes a 500.
class TERN_API http_error : public std::runtime_error {
public:
    /// Header fields an error response carries (see `header`).
    using header_list = std::vector<std::pair<std::string, std::string>>;

    /// Throws std::invalid_argument when `status` is not an error status (400..599): an
    /// exception that ends a request is a client or server error, and a 2xx or 3xx thrown by
    /// mistake must not pass for one (the handler then fails loudly, with a 500).
    http_error(int status, const std::string& message)
        : std::runtime_error(message), status_(checked(status)) {}

    /// The HTTP status the response carries.
    int status() const noexcept { return status_; }

    /// Adds header field `name`: `value` to the error response, e.g.
    /// `throw tern::http_error(401, "log in").header("WWW-Authenticate", "Bearer")`. The
    /// named subclasses have the same member returning their own type. The field is checked
    /// as `context::header` checks it when the response is made: a refused one turns the
    /// answer into a 500.
    http_error& header(std::string_view name, std::string_view value) {
        auto list =
            headers_ ? std::make_shared<header_list>(*headers_) : std::make_shared<header_list>();
        list->emplace_back(std::string(name), std::string(value));
        headers_ = std::move(list);
        return *this;
    }

    /// The header fields added with `header`, in order.
    const header_list& headers() const noexcept {
        static const header_list none;
        return headers_ ? *headers_ : none;
    }

private:
    static int checked(int status) {
        if (status < 400 || status > 599) {
            throw std::invalid_argument("tern: http_error status " + std::to_string(status) +
                                        " is outside 400..599");
        }
        return status;
    }

    int status_;
    // Shared and immutable: copying an exception must not throw.
    std::shared_ptr<const header_list> headers_;
};

/// 400: the request is malformed or fails validation.
struct TERN_API bad_request : http_error {
    /// With `message` as the body.
    explicit bad_request(const std::string& message = "Bad Request") : http_error(400, message) {}
    /// Adds a header field to the error response (see `http_error::header`).
    bad_request& header(std::string_view name, std::string_view value) {
        http_error::header(name, value);
        return *this;
    }
};

/// 401: credentials are missing or wrong.
struct TERN_API unauthorized : http_error {
    /// With `message` as the body.
    explicit unauthorized(const std::string& message = "Unauthorized") : http_error(401, message) {}
    /// Adds a header field to the error response (see `http_error::header`).
    unauthorized& header(std::string_view name, std::string_view value) {
        http_error::header(name, value);
        return *this;
    }
};

/// 403: the client is known but not allowed.
struct TERN_API forbidden : http_error {
    /// With `message` as the body.
    explicit forbidden(const std::string& message = "Forbidden") : http_error(403, message) {}
    /// Adds a header field to the error response (see `http_error::header`).
    forbidden& header(std::string_view name, std::string_view value) {
        http_error::header(name, value);
        return *this;
    }
};

/// 404: no such resource.
struct TERN_API not_found : http_error {
    /// With `message` as the body.
    explicit not_found(const std::string& message = "Not Found") : http_error(404, message) {}
    /// Adds a header field to the error response (see `http_error::header`).
    not_found& header(std::string_view name, std::string_view value) {
        http_error::header(name, value);
        return *this;
    }
};

/// 409: the request conflicts with the resource's current state.
struct TERN_API conflict : http_error {
    /// With `message` as the body.
    explicit conflict(const std::string& message = "Conflict") : http_error(409, message) {}
    /// Adds a header field to the error response (see `http_error::header`).
    conflict& header(std::string_view name, std::string_view value) {
        http_error::header(name, value);
        return *this;
    }
};

/// 410: the resource existed and is gone for good.
struct TERN_API gone : http_error {
    /// With `message` as the body.
    explicit gone(const std::string& message = "Gone") : http_error(410, message) {}
    /// Adds a header field to the error response (see `http_error::header`).
    gone& header(std::string_view name, std::string_view value) {
        http_error::header(name, value);
        return *this;
    }
};

/// 413: the request content is larger than the server accepts.
struct TERN_API content_too_large : http_error {
    /// With `message` as the body.
    explicit content_too_large(const std::string& message = "Content Too Large")
        : http_error(413, message) {}
    /// Adds a header field to the error response (see `http_error::header`).
    content_too_large& header(std::string_view name, std::string_view value) {
        http_error::header(name, value);
        return *this;
    }
};

/// 415: the request content is in a format the resource does not take.
struct TERN_API unsupported_media_type : http_error {
    /// With `message` as the body.
    explicit unsupported_media_type(const std::string& message = "Unsupported Media Type")
        : http_error(415, message) {}
    /// Adds a header field to the error response (see `http_error::header`).
    unsupported_media_type& header(std::string_view name, std::string_view value) {
        http_error::header(name, value);
        return *this;
    }
};

/// 422: well-formed content that cannot be processed (e.g. fails validation).
struct TERN_API unprocessable_content : http_error {
    /// With `message` as the body.
    explicit unprocessable_content(const std::string& message = "Unprocessable Content")
        : http_error(422, message) {}
    /// Adds a header field to the error response (see `http_error::header`).
    unprocessable_content& header(std::string_view name, std::string_view value) {
        http_error::header(name, value);
        return *this;
    }
};

/// 429: the client sent too many requests.
struct TERN_API too_many_requests : http_error {
    /// With `message` as the body.
    explicit too_many_requests(const std::string& message = "Too Many Requests")
        : http_error(429, message) {}
    /// Adds a header field to the error response (see `http_error::header`).
    too_many_requests& header(std::string_view name, std::string_view value) {
        http_error::header(name, value);
        return *this;
    }
};

/// 500: the server failed.
struct TERN_API internal_server_error : http_error {
    /// With `message` as the body.
    explicit internal_server_error(const std::string& message = "Internal Server Error")
        : http_error(500, message) {}
    /// Adds a header field to the error response (see `http_error::header`).
    internal_server_error& header(std::string_view name, std::string_view value) {
        http_error::header(name, value);
        return *this;
    }
};

/// 503: the server cannot answer now.
struct TERN_API service_unavailable : http_error {
    /// With `message` as the body.
    explicit service_unavailable(const std::string& message = "Service Unavailable")
        : http_error(503, message) {}
    /// Adds a header field to the error response (see `http_error::header`).
    service_unavailable& header(std::string_view name, std::string_view value) {
        http_error::header(name, value);
        return *this;
    }
};

}  // namespace tern

#pragma once
/// @file http_error.hpp
/// The exception a handler throws to answer with a given status.

#include <stdexcept>
#include <string>

namespace tern {

/// Thrown from a handler or filter to end the request with `status` and `message` as the
/// body. Any other exception escaping a handler becomes a 500 with a short plain body.
class http_error : public std::runtime_error {
public:
    /// `status` must be 400..599; anything else is reported as 500.
    http_error(int status, const std::string& message)
        : std::runtime_error(message), status_(status >= 400 && status <= 599 ? status : 500) {}

    /// The HTTP status the response carries.
    int status() const noexcept { return status_; }

private:
    int status_;
};

}  // namespace tern

#pragma once
// The one call the network layer makes upward: answer a complete request.

#include "http/request.hpp"
#include "http/response.hpp"

#include <string_view>

namespace tern::detail {

/// Implemented by the application layer. Called on the connection's own thread, once per
/// complete request, in order; must fill `res` and must not throw.
class request_handler {
public:
    virtual void handle(request& req, response& res, std::string_view remote_ip) noexcept = 0;
    /// Fills `res` for a request the connection refuses with `status` (a limit, a parse
    /// error, a timeout; 400..599). `req` holds the request head when it was complete,
    /// else it is empty. The connection closes after writing `res`.
    virtual void handle_failure(request& req, int status, response& res,
                                std::string_view remote_ip) noexcept = 0;

protected:
    ~request_handler() = default;
};

}  // namespace tern::detail

#pragma once
// What one request/response exchange holds while the handler chain runs: the context's
// backing store.

#include "http/request.hpp"
#include "http/response.hpp"
#include "routing/router.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace tern::detail {

/// Per-request state behind `tern::context`. The vectors are reused from request to
/// request on a thread, so matching a route with parameters does not allocate once warm.
struct exchange {
    request& req;
    response& res;
    std::string_view remote_ip;
    std::vector<path_param>& params;    ///< raw captures of the matched route
    std::vector<std::string>& decoded;  ///< decoded values, parallel to `params`
};

}  // namespace tern::detail

#pragma once
// A response as handlers build it: set, not sent. The writer serializes it once, after the
// handler chain returns.

#include <string>
#include <utility>
#include <vector>

namespace tern::detail {

/// The response of one exchange. Reused per connection; `clear()` keeps capacity.
struct response {
    int status = 200;
    std::string content_type;                                 ///< empty: no Content-Type
    std::vector<std::pair<std::string, std::string>> fields;  ///< user-set header fields
    std::string body;
    bool close = false;  ///< the handler layer asks for the connection to close after this

    void clear() noexcept {
        status = 200;
        content_type.clear();
        fields.clear();
        body.clear();
        close = false;
    }
};

}  // namespace tern::detail

#include "testing/outgoing.hpp"

#include "testing/response_reader.hpp"

#include <algorithm>

namespace tern::testing::detail {

bool has_field(const header_list& fields, std::string_view name) {
    return std::any_of(fields.begin(), fields.end(),
                       [name](const testing::header& h) { return iequals(h.name, name); });
}

bool adds_content_length(const outgoing_request& request) {
    const std::string_view method = request.method;
    const bool body_method = method == "POST" || method == "PUT" || method == "PATCH";
    return (!request.body.empty() || body_method) && !has_field(request.fields, "Content-Length") &&
           !has_field(request.fields, "Transfer-Encoding");
}

}  // namespace tern::testing::detail

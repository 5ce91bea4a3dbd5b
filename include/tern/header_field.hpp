#pragma once
/// @file header_field.hpp
/// One request header field, as the context and tern's layers hand them out.

#include <string_view>

namespace tern {

/// One request header field. The views stay valid until the handler chain returns.
struct header_field {
    std::string_view name;   ///< As the client sent it (compare case-insensitively).
    std::string_view value;  ///< Without surrounding whitespace.
};

}  // namespace tern

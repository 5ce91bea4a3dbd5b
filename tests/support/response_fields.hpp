#pragma once
// A header field of a response tern built (tern::detail::response, before it is written),
// for the unit tests of the layers that add fields (compression, CORS).

#include "http/response.hpp"
#include "http/token.hpp"

#include <catch2/catch.hpp>

#include <optional>
#include <string>
#include <string_view>

namespace tern_test {

/// The value of field `name` (ASCII case-insensitive), or none; fails the test when the
/// response carries the field more than once.
inline std::optional<std::string> only_field(const tern::detail::response& res,
                                             std::string_view name) {
    std::optional<std::string> found;
    for (const auto& [n, v] : res.fields) {
        if (!tern::detail::iequals(n, name)) continue;
        REQUIRE_FALSE(found);
        found = v;
    }
    return found;
}

}  // namespace tern_test

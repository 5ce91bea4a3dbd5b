#pragma once
// The request methods tern can receive: those llhttp parses (the IANA HTTP method registry
// as llhttp knows it). A route for any other method could never be reached.

#include <string_view>

namespace tern::detail {

/// Whether llhttp parses `method` (case-sensitive, e.g. "GET", "PROPFIND", "QUERY").
bool is_known_method(std::string_view method) noexcept;

}  // namespace tern::detail

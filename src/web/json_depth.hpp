#pragma once
// How deeply a JSON text nests, found without parsing it: a linear pre-scan that lets
// body_as refuse a deep body before nlohmann_json builds (and later copies or serializes,
// both recursively) a tree of that depth.

#include <cstddef>
#include <string_view>

namespace tern::detail {

/// True when no point of `text` lies inside more than `max_depth` unclosed '[' or '{'
/// outside strings. One pass, stopping at the first byte past the limit; no allocation.
/// Exact for valid JSON. For malformed text it counts the same tokens a JSON parser would
/// read until its first error, so a parser never nests deeper than this scan allows.
bool json_depth_within(std::string_view text, std::size_t max_depth) noexcept;

}  // namespace tern::detail

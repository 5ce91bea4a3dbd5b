#pragma once
// Which content codings a client accepts, from Accept-Encoding (RFC 9110 12.5.3).

#include <tern/header_field.hpp>

#include <span>
#include <string_view>

namespace tern::detail {

/// The weights (q-values in thousandths, 0..1000) a request gives the codings tern
/// produces (on the fly, or as precompressed variants). 0 means not acceptable.
struct accepted_codings {
    int br = 0;
    int gzip = 0;
    int zstd = 0;
};

/// Reads every Accept-Encoding field. A coding named explicitly takes its own weight (the
/// first mention wins); "*" gives its weight to codings not named; "x-gzip" is "gzip";
/// names compare case-insensitively; no field, or an invalid q-value, means not acceptable.
accepted_codings parse_accept_encoding(std::span<const header_field> headers) noexcept;

}  // namespace tern::detail

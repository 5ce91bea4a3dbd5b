#pragma once
// The Range header (RFC 9110 14.2) for one file: a single byte range is served as 206, an
// unsatisfiable one as 416; anything else (absent, malformed, another unit, several ranges)
// is ignored and the whole file is sent. Several ranges are never served as multipart, so a
// many-range header cannot amplify a response.

#include <cstdint>
#include <string_view>

namespace tern::detail {

/// What a Range header asks of a file of a given size.
struct byte_range {
    enum class kind {
        full,           ///< ignore the header: 200 with the whole file
        partial,        ///< 206: `length` bytes from `offset`
        unsatisfiable,  ///< 416 with "Content-Range: bytes */size"
    };
    kind what = kind::full;
    std::uint64_t offset = 0;
    std::uint64_t length = 0;
};

/// Reads the Range field `value` against a file of `size` bytes. Accepts `bytes=a-b`
/// (b clamped to the last byte), `bytes=a-` and `bytes=-n` (the last n bytes, all of them
/// when n > size), unit case-insensitive, OWS and empty list members around a single
/// range. `a >= size` and `-0` are unsatisfiable, so every range of an empty file is;
/// `b < a`, signs, spaces inside a range, or more than one range give `full`.
byte_range parse_byte_range(std::string_view value, std::uint64_t size) noexcept;

}  // namespace tern::detail

#pragma once
// multipart/form-data bodies (RFC 7578, framing per RFC 2046 5.1). Transport-free: the body
// is already in memory (bounded by max_body_size); parts are views into it.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tern::detail {

/// One part of a multipart/form-data body.
struct multipart_part {
    std::string name;           ///< The `name` parameter of Content-Disposition (unquoted).
    bool has_filename = false;  ///< Content-Disposition had `filename` or `filename*`.
    std::string filename;       ///< As sent (filename* decoded from UTF-8 percent form); raw.
    std::string content_type;   ///< The part's Content-Type; "text/plain" when absent.
    std::string_view data;      ///< The part's bytes, a view into the body.
};

/// Limits applied while parsing.
struct multipart_limits {
    std::size_t max_file_size = 10 * 1024 * 1024;  ///< Bytes of one part with a filename.
    std::size_t max_parts = 1000;                  ///< Parts in one body.
    std::size_t max_part_header_size = 8 * 1024;   ///< Header bytes of one part.
};

/// How parsing ended.
enum class multipart_status {
    ok,
    malformed,       ///< Not a valid multipart/form-data body: answer 400.
    file_too_large,  ///< A file part is over max_file_size: answer 413.
    too_many_parts,  ///< More than max_parts parts: answer 413.
    /// A part's headers are over max_part_header_size: answer 413. Only the streamed parser
    /// (web/multipart_stream.hpp) says so; parse_multipart says malformed, as it always did.
    header_too_large,
};

/// The boundary parameter of a `multipart/form-data` Content-Type value (type compared
/// case-insensitively, parameter name too, value quoted or not); std::nullopt when the type
/// is something else or the boundary is missing, empty, longer than 70 characters or uses
/// characters RFC 2046 5.1.1 does not allow.
std::optional<std::string> multipart_boundary(std::string_view content_type);

/// Splits `body` into parts, appending them to `out`. Strict about framing: the first
/// delimiter must start a line (a preamble before it is ignored), each part needs a
/// Content-Disposition: form-data with a name, and the close delimiter must be present
/// (an epilogue after it is ignored). Part header lines end in CRLF; obs-fold, a repeated
/// Content-Disposition or Content-Type, or a repeated name/filename parameter is
/// malformed. A body of just the close delimiter is ok with no parts (browsers send it for
/// an empty form). `filename*` (RFC 8187, UTF-8 only) wins over `filename`; one that
/// cannot be decoded falls back to `filename`. On anything but `ok`, `out` holds the parts read
/// so far and `message` (when not null) says what was wrong, for the 400/413 body.
multipart_status parse_multipart(std::string_view body, std::string_view boundary,
                                 const multipart_limits& limits, std::vector<multipart_part>& out,
                                 std::string* message = nullptr);

/// What the header block of one part names (views into the block).
struct part_headers {
    std::optional<std::string_view> disposition;   ///< Content-Disposition value
    std::optional<std::string_view> content_type;  ///< Content-Type value
    std::size_t size = 0;                          ///< Bytes, the empty line included.
};

/// Reads the header block at the start of `s`: CRLF-ended lines up to an empty one, all
/// within `max_size` bytes. Strict: no obs-fold, no bare LF or CR, names are tokens, and
/// Content-Disposition and Content-Type appear at most once. On failure returns false with
/// `why` set.
bool read_part_headers(std::string_view s, std::size_t max_size, part_headers& h, std::string& why);

/// Checks one header line of a part, `text` without its CRLF and not empty, and records a
/// Content-Disposition or Content-Type in `h` (a second one of either is an error). What
/// read_part_headers does for each line; the streamed parser calls it as each line arrives.
bool read_part_header_line(std::string_view text, part_headers& h, std::string& why);

/// Fills `part`'s name, filename and content type from its headers (RFC 7578 4.2:
/// Content-Disposition form-data with a name; filename* wins over filename; Content-Type
/// "text/plain" when absent). False with `why` set when they do not describe a form part.
bool describe_part(const part_headers& h, multipart_part& part, std::string& why);

/// A file name safe to use as the last component of a path: the part of `raw` after the
/// last '/' or '\\', with control characters, NUL and the characters `<>:"|?*` replaced by
/// '_', leading dots and spaces removed, at most 255 bytes (not splitting a UTF-8
/// sequence); "upload" when nothing is left (e.g. "..", "", "/"). Windows reserved names
/// (CON, NUL...) and trailing dots or spaces are not handled: tern targets POSIX systems.
std::string safe_filename(std::string_view raw);

}  // namespace tern::detail

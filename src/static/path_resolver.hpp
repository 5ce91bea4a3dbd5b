#pragma once
// From the raw request path below a hosted prefix to the relative path of a file: decoded
// exactly once, with every trick that reaches outside the root (encoded dots or slashes,
// NUL, backslash, overlong or invalid UTF-8, dot segments above the root) refused.

#include <string>
#include <string_view>

namespace tern::detail {

/// Why a request path was refused; every refusal is answered 400.
enum class path_status {
    ok,
    bad_character,  ///< NUL, control, backslash, non-ASCII byte, or an encoded '/' or '\'
    bad_encoding,   ///< '%' not followed by two hex digits, or invalid (e.g. overlong) UTF-8
    dot_segment,    ///< a segment that decodes to "." or ".." (e.g. "%2e%2e")
    escapes,        ///< literal ".." segments that climb above the root
};

/// A request path made safe to look up below a root directory.
struct resolved_path {
    /// Decoded segments joined by '/', no leading slash; empty for the root itself. No
    /// segment is empty, ".", "..", or contains NUL or '/'.
    std::string decoded;
    /// The same segments still percent-encoded as sent, each prefixed by '/' ("" for the
    /// root): the normalized path for a redirect's Location.
    std::string raw;
    /// The path ended with '/' (or with a dot segment): it asks for a directory.
    bool trailing_slash = false;
    /// Some segment starts with '.' (a dotfile or dot-directory).
    bool hidden = false;
};

/// Resolves `raw`, the part of a request path after the hosted prefix ("" or starting with
/// '/'). Empty segments collapse ("//a" is "/a"); literal "." and ".." segments are removed
/// per RFC 3986 5.2.4 before decoding, so decoding can never create a new one. On any
/// status other than ok, `out` is unspecified.
path_status resolve_path(std::string_view raw, resolved_path& out);
/// resolve_path without its fast path for plain paths (ASCII, no '%', no empty or dot
/// segment): the same answer for every input, by the general steps. The fast path's oracle
/// in the tests.
path_status resolve_path_general(std::string_view raw, resolved_path& out);

/// Whether `s` is well-formed UTF-8: no overlong forms, surrogates or code points above
/// U+10FFFF (RFC 3629 4).
bool valid_utf8(std::string_view s) noexcept;

}  // namespace tern::detail

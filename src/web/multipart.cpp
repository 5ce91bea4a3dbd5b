#include "web/multipart.hpp"

#include "http/header_values.hpp"
#include "http/request.hpp"
#include "http/token.hpp"
#include "web/linear_search.hpp"

#include <algorithm>
#include <utility>

namespace tern::detail {

namespace {

/// bchars (RFC 2046 5.1.1): the characters a boundary may use; a space only inside it.
constexpr bool is_bchar(char c) noexcept {
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) return true;
    return std::string_view("'()+_,-./:=? ").find(c) != std::string_view::npos;
}

/// boundary := 0*69<bchars> bcharsnospace (RFC 2046 5.1.1).
bool is_valid_boundary(std::string_view b) noexcept {
    return !b.empty() && b.size() <= 70 && b.back() != ' ' &&
           std::all_of(b.begin(), b.end(), is_bchar);
}

/// Octets a quoted-string may hold, plain or after a backslash (RFC 9110 5.6.4): HTAB, SP,
/// VCHAR and obs-text. DQUOTE and backslash are handled by the reader before this check.
constexpr bool is_quoted_text(char c) noexcept {
    const auto u = static_cast<unsigned char>(c);
    return c == '\t' || (u >= 0x20 && u != 0x7F);
}

/// attr-char (RFC 8187 3.2.1): what an ext-value may hold unencoded.
constexpr bool is_attr_char(char c) noexcept {
    return is_tchar(c) && c != '%' && c != '\'' && c != '*';
}

bool is_ows(char c) noexcept { return c == ' ' || c == '\t'; }

/// Reads the parameters that follow a media type or disposition type, `s` starting at the
/// first ';': *( OWS ";" OWS [ name "=" ( token / quoted-string ) ] ) (RFC 9110 5.6.6),
/// calling `fn(name, value)` with the value unquoted. False on a syntax error or as soon as
/// `fn` returns false. With `browser_quoting` (Content-Disposition of form parts), a
/// backslash escapes only a following '"' or '\\' and is otherwise itself: browsers do not
/// escape backslashes in file names (WHATWG HTML form encoding percent-encodes '"', CR and
/// LF instead), so "C:\\dir\\a.txt" keeps its separators for safe_filename to split on.
template <class Fn>
bool for_each_parameter(std::string_view s, bool browser_quoting, Fn&& fn) {
    std::string value;
    std::size_t i = 0;
    auto skip_ows = [&] {
        while (i < s.size() && is_ows(s[i])) ++i;
    };
    for (;;) {
        skip_ows();
        if (i == s.size()) return true;
        if (s[i] != ';') return false;
        ++i;
        skip_ows();
        if (i == s.size() || s[i] == ';') continue;  // an empty parameter

        const std::size_t name_start = i;
        while (i < s.size() && is_tchar(s[i])) ++i;
        const std::string_view name = s.substr(name_start, i - name_start);
        if (name.empty() || i == s.size() || s[i] != '=') return false;
        ++i;

        value.clear();
        if (i < s.size() && s[i] == '"') {
            for (++i;; ++i) {
                if (i == s.size()) return false;
                char c = s[i];
                if (c == '"') break;
                if (c == '\\') {
                    const bool escapes = i + 1 < s.size() && (s[i + 1] == '"' || s[i + 1] == '\\');
                    if (escapes || !browser_quoting) {
                        if (++i == s.size()) return false;
                        c = s[i];
                    }
                }
                if (!is_quoted_text(c)) return false;
                value += c;
            }
            ++i;
        } else {
            const std::size_t value_start = i;
            while (i < s.size() && is_tchar(s[i])) ++i;
            if (i == value_start) return false;
            value.assign(s.substr(value_start, i - value_start));
        }
        if (!fn(name, std::string_view(value))) return false;
    }
}

/// Decodes an RFC 8187 ext-value, `UTF-8'[language]'percent-encoded`, to its bytes;
/// std::nullopt for another charset or a syntax error.
std::optional<std::string> decode_ext_value(std::string_view v) {
    const std::size_t charset_end = v.find('\'');
    if (charset_end == std::string_view::npos) return std::nullopt;
    if (!iequals(v.substr(0, charset_end), "UTF-8")) return std::nullopt;
    const std::size_t language_end = v.find('\'', charset_end + 1);
    if (language_end == std::string_view::npos) return std::nullopt;

    std::string out;
    for (std::size_t i = language_end + 1; i < v.size(); ++i) {
        if (v[i] != '%') {
            if (!is_attr_char(v[i])) return std::nullopt;
            out += v[i];
            continue;
        }
        if (v.size() - i < 3) return std::nullopt;
        const int high = hex_value(v[i + 1]);
        const int low = hex_value(v[i + 2]);
        if (high < 0 || low < 0) return std::nullopt;
        out += static_cast<char>(high * 16 + low);
        i += 2;
    }
    return out;
}

/// Reads a part's Content-Disposition (RFC 7578 4.2) into `part`: the type must be
/// form-data and a name is required; filename* wins over filename. On failure returns
/// false with `why` set.
bool read_disposition(std::string_view value, multipart_part& part, std::string& why) {
    const std::size_t semicolon = value.find(';');
    if (!iequals(trim_ows(value.substr(0, semicolon)), "form-data")) {
        why = "part Content-Disposition is not form-data";
        return false;
    }
    std::optional<std::string> name;
    std::optional<std::string> filename;
    std::optional<std::string> filename_ext;
    bool duplicate = false;
    auto take = [&](std::optional<std::string>& slot, std::string_view v) {
        duplicate = slot.has_value();
        slot.emplace(v);
        return !duplicate;
    };
    const bool ok = semicolon == std::string_view::npos ||
                    for_each_parameter(value.substr(semicolon), true, [&](auto key, auto v) {
                        if (iequals(key, "name")) return take(name, v);
                        if (iequals(key, "filename")) return take(filename, v);
                        if (iequals(key, "filename*")) return take(filename_ext, v);
                        return true;
                    });
    if (!ok) {
        why = duplicate ? "part Content-Disposition repeats a parameter"
                        : "part Content-Disposition is malformed";
        return false;
    }
    if (!name) {
        why = "part has no name";
        return false;
    }
    part.name = std::move(*name);
    part.has_filename = filename || filename_ext;
    if (filename_ext) {
        if (auto decoded = decode_ext_value(*filename_ext)) {
            part.filename = std::move(*decoded);
            return true;
        }
        if (!filename) {
            why = "part filename* is not UTF-8 percent-encoded";
            return false;
        }
    }
    if (filename) part.filename = std::move(*filename);
    return true;
}

// One part whose headers start at `pos` (just past the line end after its delimiter): its
// headers and data into `part`, and in `next` where the delimiter after it starts.
multipart_status read_one_part(std::string_view body, std::size_t pos,
                               const multipart_limits& limits, const linear_searcher& searcher,
                               multipart_part& part, std::size_t& next, std::string& why) {
    part_headers headers;
    if (!read_part_headers(body.substr(pos), limits.max_part_header_size, headers, why)) {
        return multipart_status::malformed;
    }
    if (!describe_part(headers, part, why)) return multipart_status::malformed;

    // The data runs to the next delimiter. The search starts at the empty line that ended
    // the headers: its CRLF doubles as the delimiter's when the part has no body at all
    // (RFC 2046 5.1.1 makes `CRLF *OCTET` after the headers optional).
    const std::size_t blank = pos + headers.size - 2;
    next = searcher.find(body, blank);
    if (next == std::string_view::npos) {
        why = "multipart body has no closing boundary";
        return multipart_status::malformed;
    }
    if (next > blank) part.data = body.substr(blank + 2, next - blank - 2);
    if (part.has_filename && part.data.size() > limits.max_file_size) {
        why = "file '" + safe_filename(part.filename) + "' is larger than " +
              std::to_string(limits.max_file_size) + " bytes";
        return multipart_status::file_too_large;
    }
    return multipart_status::ok;
}

}  // namespace

bool read_part_header_line(std::string_view text, part_headers& h, std::string& why) {
    if (is_ows(text.front())) {
        why = "part header is folded (obs-fold)";
        return false;
    }
    const std::size_t colon = text.find(':');
    if (colon == std::string_view::npos) {
        why = "part header line has no colon";
        return false;
    }
    const std::string_view name = text.substr(0, colon);
    if (!is_token(name)) {
        why = "part header name is not a token";
        return false;
    }
    const std::string_view value = trim_ows(text.substr(colon + 1));
    if (!std::all_of(value.begin(), value.end(), is_quoted_text)) {
        why = "part header value has a control character";
        return false;
    }
    std::optional<std::string_view>* slot = nullptr;
    if (iequals(name, "Content-Disposition")) slot = &h.disposition;
    if (iequals(name, "Content-Type")) slot = &h.content_type;
    if (!slot) return true;
    if (*slot) {
        why = "part has two " + std::string(name) + " headers";
        return false;
    }
    slot->emplace(value);
    return true;
}

bool read_part_headers(std::string_view s, std::size_t max_size, part_headers& h,
                       std::string& why) {
    const std::string_view block = s.substr(0, max_size);
    std::size_t line = 0;
    for (;;) {
        const std::size_t lf = block.find('\n', line);
        if (lf == std::string_view::npos) {
            why = block.size() < s.size()
                      ? "part headers are larger than " + std::to_string(max_size) + " bytes"
                      : "multipart body ends inside part headers";
            return false;
        }
        if (lf == line || block[lf - 1] != '\r') {
            why = "part header line does not end in CRLF";
            return false;
        }
        const std::string_view text = block.substr(line, lf - 1 - line);
        line = lf + 1;
        if (text.empty()) break;
        if (!read_part_header_line(text, h, why)) return false;
    }
    h.size = line;
    return true;
}

bool describe_part(const part_headers& h, multipart_part& part, std::string& why) {
    if (!h.disposition) {
        why = "part has no Content-Disposition";
        return false;
    }
    if (!read_disposition(*h.disposition, part, why)) return false;
    part.content_type = h.content_type.value_or("text/plain");
    return true;
}

std::optional<std::string> multipart_boundary(std::string_view content_type) {
    const std::size_t semicolon = content_type.find(';');
    if (semicolon == std::string_view::npos) return std::nullopt;
    if (!iequals(trim_ows(content_type.substr(0, semicolon)), "multipart/form-data")) {
        return std::nullopt;
    }
    std::optional<std::string> boundary;
    const bool ok =
        for_each_parameter(content_type.substr(semicolon), false, [&](auto name, auto v) {
            if (!iequals(name, "boundary")) return true;
            if (boundary) return false;  // two boundaries: which one would the sender mean?
            boundary.emplace(v);
            return true;
        });
    if (!ok || !boundary || !is_valid_boundary(*boundary)) return std::nullopt;
    return boundary;
}

multipart_status parse_multipart(std::string_view body, std::string_view boundary,
                                 const multipart_limits& limits, std::vector<multipart_part>& out,
                                 std::string* message) {
    auto fail = [message](multipart_status status, std::string why) {
        if (message) *message = std::move(why);
        return status;
    };
    if (boundary.empty()) return fail(multipart_status::malformed, "multipart boundary is empty");

    // Every delimiter but possibly the first is CRLF "--" boundary (RFC 2046 5.1.1). One
    // searcher serves every look-up, and each starts where the previous part ended, so the
    // body is scanned once, in time linear in its size whatever the boundary (issue 13).
    std::string delimiter = "\r\n--";
    delimiter.append(boundary);
    const linear_searcher searcher(delimiter);
    auto find_delimiter = [&](std::size_t from) { return searcher.find(body, from); };

    // `pos` is just past the "--" boundary of the delimiter last read.
    std::size_t pos = 0;
    const std::string_view first_delimiter = std::string_view(delimiter).substr(2);
    if (body.starts_with(first_delimiter)) {
        pos = first_delimiter.size();
    } else {
        const std::size_t found = find_delimiter(0);  // after a preamble
        if (found == std::string_view::npos) {
            return fail(multipart_status::malformed, "multipart body has no opening boundary");
        }
        pos = found + delimiter.size();
    }

    std::size_t parts = 0;
    for (;;) {
        // After a delimiter: "--" closes the body (the epilogue is ignored); otherwise
        // transport padding and CRLF start the next part.
        std::string_view rest = body.substr(pos);
        if (rest.starts_with("--")) return multipart_status::ok;
        while (!rest.empty() && is_ows(rest.front())) rest.remove_prefix(1);
        if (rest.empty()) {
            return fail(multipart_status::malformed, "multipart body has no closing boundary");
        }
        if (!rest.starts_with("\r\n")) {
            return fail(multipart_status::malformed,
                        "multipart boundary is followed by something other than a line end");
        }
        if (parts == limits.max_parts) {
            return fail(
                multipart_status::too_many_parts,
                "multipart body has more than " + std::to_string(limits.max_parts) + " parts");
        }
        ++parts;
        pos = body.size() - rest.size() + 2;

        multipart_part part;
        std::size_t next = 0;
        std::string why;
        const auto status = read_one_part(body, pos, limits, searcher, part, next, why);
        if (status != multipart_status::ok) return fail(status, std::move(why));
        out.push_back(std::move(part));
        pos = next + delimiter.size();
    }
}

std::string safe_filename(std::string_view raw) {
    const std::size_t slash = raw.find_last_of("/\\");
    if (slash != std::string_view::npos) raw.remove_prefix(slash + 1);

    std::string name;
    name.reserve(raw.size());
    for (const char c : raw) {
        const auto u = static_cast<unsigned char>(c);
        const bool unsafe =
            u < 0x20 || u == 0x7F || std::string_view("<>:\"|?*").find(c) != std::string_view::npos;
        name += unsafe ? '_' : c;
    }
    // A leading dot hides the file or, as "." and "..", names a directory.
    const std::size_t first = name.find_first_not_of(". ");
    name.erase(0, first == std::string::npos ? name.size() : first);

    // 255 bytes is the usual file-name limit. Cut before the sequence that straddles it,
    // stepping back over at most three continuation bytes (10xxxxxx).
    constexpr std::size_t max_bytes = 255;
    if (name.size() > max_bytes) {
        std::size_t cut = max_bytes;
        auto continuation = [&](std::size_t i) {
            return (static_cast<unsigned char>(name[i]) & 0xC0) == 0x80;
        };
        for (int back = 0; back < 3 && cut > 0 && continuation(cut); ++back) --cut;
        if (continuation(cut)) cut = max_bytes;  // not UTF-8 anyway: cut at the limit
        name.resize(cut);
    }
    return name.empty() ? "upload" : name;
}

}  // namespace tern::detail

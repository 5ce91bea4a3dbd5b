#include "static/path_resolver.hpp"

#include "http/token.hpp"

namespace tern::detail {

namespace {

bool is_control(unsigned char c) noexcept { return c < 0x20 || c == 0x7f; }

/// Bytes a raw request path must not contain: what llhttp refuses anyway (controls, space,
/// non-ASCII), plus the backslash, which some file systems and proxies read as a separator.
bool bad_raw_byte(unsigned char c) noexcept {
    return is_control(c) || c == ' ' || c >= 0x80 || c == '\\';
}

/// Appends the decoded form of the raw segment `seg` to `out`.
path_status decode_segment(std::string_view seg, std::string& out) {
    const std::size_t start = out.size();
    for (std::size_t i = 0; i < seg.size(); ++i) {
        char c = seg[i];
        if (c == '%') {
            if (i + 2 >= seg.size()) return path_status::bad_encoding;
            const int hi = hex_value(seg[i + 1]);
            const int lo = hex_value(seg[i + 2]);
            if (hi < 0 || lo < 0) return path_status::bad_encoding;
            c = static_cast<char>(hi * 16 + lo);
            i += 2;
            const auto u = static_cast<unsigned char>(c);
            // An encoded separator would split a segment after the dot segments were
            // removed; an encoded NUL would cut the name short in the kernel.
            if (c == '/' || c == '\\' || is_control(u)) return path_status::bad_character;
        }
        out.push_back(c);
    }
    const std::string_view decoded = std::string_view(out).substr(start);
    if (decoded == "." || decoded == "..") return path_status::dot_segment;
    if (!valid_utf8(decoded)) return path_status::bad_encoding;
    return path_status::ok;
}

}  // namespace

bool valid_utf8(std::string_view s) noexcept {
    std::size_t i = 0;
    const std::size_t n = s.size();
    auto cont = [&](std::size_t at, unsigned char lo, unsigned char hi) {
        if (at >= n) return false;
        const auto b = static_cast<unsigned char>(s[at]);
        return b >= lo && b <= hi;
    };
    while (i < n) {
        const auto b = static_cast<unsigned char>(s[i]);
        if (b < 0x80) {
            ++i;
        } else if (b >= 0xc2 && b <= 0xdf) {
            if (!cont(i + 1, 0x80, 0xbf)) return false;
            i += 2;
        } else if (b >= 0xe0 && b <= 0xef) {
            // E0 needs A0..BF (no overlong), ED needs 80..9F (no surrogates).
            const unsigned char lo = b == 0xe0 ? 0xa0 : 0x80;
            const unsigned char hi = b == 0xed ? 0x9f : 0xbf;
            if (!cont(i + 1, lo, hi) || !cont(i + 2, 0x80, 0xbf)) return false;
            i += 3;
        } else if (b >= 0xf0 && b <= 0xf4) {
            // F0 needs 90..BF (no overlong), F4 needs 80..8F (nothing above U+10FFFF).
            const unsigned char lo = b == 0xf0 ? 0x90 : 0x80;
            const unsigned char hi = b == 0xf4 ? 0x8f : 0xbf;
            if (!cont(i + 1, lo, hi) || !cont(i + 2, 0x80, 0xbf) || !cont(i + 3, 0x80, 0xbf)) {
                return false;
            }
            i += 4;
        } else {
            return false;  // C0, C1 (overlong ASCII such as %c0%ae), F5..FF, or a stray 80..BF
        }
    }
    return true;
}

path_status resolve_path(std::string_view raw, resolved_path& out) {
    // Most paths are plain: printable ASCII without '%', no empty segment ("//") and no
    // segment that starts with '.' ("/." covers ".", ".." and dotfiles). For them the
    // general steps change nothing but the leading and trailing slash, so one scan does.
    if (raw.size() < 2 || raw.front() != '/') return resolve_path_general(raw, out);
    char before = '/';
    for (std::size_t i = 1; i < raw.size(); ++i) {
        const char c = raw[i];
        if (bad_raw_byte(static_cast<unsigned char>(c)) || c == '%' ||
            (before == '/' && (c == '/' || c == '.'))) {
            return resolve_path_general(raw, out);
        }
        before = c;
    }
    out.trailing_slash = raw.back() == '/';
    out.hidden = false;
    const std::string_view kept = raw.substr(0, raw.size() - (out.trailing_slash ? 1 : 0));
    out.raw.assign(kept);
    out.decoded.assign(kept.substr(1));
    return path_status::ok;
}

path_status resolve_path_general(std::string_view raw, resolved_path& out) {
    out.decoded.clear();
    out.raw.clear();
    out.trailing_slash = false;
    out.hidden = false;
    if (raw.empty()) return path_status::ok;
    if (raw.front() != '/') return path_status::bad_character;
    for (const char c : raw) {
        if (bad_raw_byte(static_cast<unsigned char>(c))) return path_status::bad_character;
    }

    // RFC 3986 5.2.4 on the raw segments: '.' is dropped, '..' drops the segment before it
    // and may not climb above the root. Empty segments collapse.
    std::size_t pos = 1;
    for (;;) {
        const std::size_t slash = raw.find('/', pos);
        const std::size_t end = slash == std::string_view::npos ? raw.size() : slash;
        const std::string_view seg = raw.substr(pos, end - pos);
        const bool last = slash == std::string_view::npos;
        if (seg == "..") {
            if (out.raw.empty()) return path_status::escapes;
            out.raw.resize(out.raw.rfind('/'));
        } else if (!seg.empty() && seg != ".") {
            out.raw.push_back('/');
            out.raw.append(seg);
        }
        if (last) {
            out.trailing_slash = seg.empty() || seg == "." || seg == "..";
            break;
        }
        pos = slash + 1;
    }

    // Decode each remaining segment exactly once.
    pos = 0;
    while (pos < out.raw.size()) {
        const std::size_t next = out.raw.find('/', pos + 1);
        const std::size_t end = next == std::string::npos ? out.raw.size() : next;
        const std::string_view seg = std::string_view(out.raw).substr(pos + 1, end - pos - 1);
        if (!out.decoded.empty()) out.decoded.push_back('/');
        const std::size_t start = out.decoded.size();
        const path_status st = decode_segment(seg, out.decoded);
        if (st != path_status::ok) return st;
        if (out.decoded[start] == '.') out.hidden = true;
        pos = end;
    }
    return path_status::ok;
}

}  // namespace tern::detail

#include "static/mime_types.hpp"

#include "http/token.hpp"

#include <algorithm>
#include <array>
#include <stdexcept>
#include <utility>

namespace tern::detail {

namespace {

using entry = std::pair<std::string_view, std::string_view>;

// Sorted by extension for binary search (checked at compile time). Text types carry
// charset=utf-8 (RFC 9110 8.3.1: a text type without one is read as whatever the client
// guesses); JavaScript is text/javascript per RFC 9239.
constexpr std::array builtin_types = {
    entry{"7z", "application/x-7z-compressed"},
    entry{"aac", "audio/aac"},
    entry{"apng", "image/apng"},
    entry{"atom", "application/atom+xml"},
    entry{"avif", "image/avif"},
    entry{"bin", "application/octet-stream"},
    entry{"bmp", "image/bmp"},
    entry{"br", "application/x-brotli"},
    entry{"bz2", "application/x-bzip2"},
    entry{"cjs", "text/javascript; charset=utf-8"},
    entry{"css", "text/css; charset=utf-8"},
    entry{"csv", "text/csv; charset=utf-8"},
    entry{"eot", "application/vnd.ms-fontobject"},
    entry{"epub", "application/epub+zip"},
    entry{"flac", "audio/flac"},
    entry{"gif", "image/gif"},
    entry{"gz", "application/gzip"},
    entry{"heic", "image/heic"},
    entry{"htm", "text/html; charset=utf-8"},
    entry{"html", "text/html; charset=utf-8"},
    entry{"ico", "image/vnd.microsoft.icon"},
    entry{"ics", "text/calendar; charset=utf-8"},
    entry{"jpeg", "image/jpeg"},
    entry{"jpg", "image/jpeg"},
    entry{"js", "text/javascript; charset=utf-8"},
    entry{"json", "application/json"},
    entry{"jsonld", "application/ld+json"},
    entry{"jxl", "image/jxl"},
    entry{"m4a", "audio/mp4"},
    entry{"m4v", "video/mp4"},
    entry{"manifest", "text/cache-manifest; charset=utf-8"},
    entry{"map", "application/json"},
    entry{"md", "text/markdown; charset=utf-8"},
    entry{"mid", "audio/midi"},
    entry{"midi", "audio/midi"},
    entry{"mjs", "text/javascript; charset=utf-8"},
    entry{"mov", "video/quicktime"},
    entry{"mp3", "audio/mpeg"},
    entry{"mp4", "video/mp4"},
    entry{"mpeg", "video/mpeg"},
    entry{"oga", "audio/ogg"},
    entry{"ogg", "audio/ogg"},
    entry{"ogv", "video/ogg"},
    entry{"opus", "audio/opus"},
    entry{"otf", "font/otf"},
    entry{"pdf", "application/pdf"},
    entry{"png", "image/png"},
    entry{"rss", "application/rss+xml"},
    entry{"rtf", "application/rtf"},
    entry{"svg", "image/svg+xml"},
    entry{"svgz", "image/svg+xml"},
    entry{"tar", "application/x-tar"},
    entry{"tif", "image/tiff"},
    entry{"tiff", "image/tiff"},
    entry{"toml", "application/toml"},
    entry{"ts", "video/mp2t"},
    entry{"ttf", "font/ttf"},
    entry{"txt", "text/plain; charset=utf-8"},
    entry{"vtt", "text/vtt; charset=utf-8"},
    entry{"wasm", "application/wasm"},
    entry{"wav", "audio/wav"},
    entry{"weba", "audio/webm"},
    entry{"webm", "video/webm"},
    entry{"webmanifest", "application/manifest+json"},
    entry{"webp", "image/webp"},
    entry{"woff", "font/woff"},
    entry{"woff2", "font/woff2"},
    entry{"xhtml", "application/xhtml+xml"},
    entry{"xml", "application/xml"},
    entry{"xz", "application/x-xz"},
    entry{"yaml", "application/yaml"},
    entry{"yml", "application/yaml"},
    entry{"zip", "application/zip"},
    entry{"zst", "application/zstd"},
};

static_assert(std::is_sorted(builtin_types.begin(), builtin_types.end(),
                             [](const entry& a, const entry& b) { return a.first < b.first; }));

std::string lowercase(std::string_view s) {
    std::string out(s);
    for (char& c : out) c = ascii_lower(c);
    return out;
}

}  // namespace

mime_types::mime_types(const std::map<std::string, std::string>& extra) {
    for (const auto& [ext, type] : extra) {
        std::string_view key = ext;
        if (!key.empty() && key.front() == '.') key.remove_prefix(1);
        if (key.empty() || key.find_first_of("./") != std::string_view::npos || has_control(key)) {
            throw std::invalid_argument(
                "tern: static_files extra_mime_types has an invalid "
                "extension '" +
                ext + "'");
        }
        if (type.empty() || has_control(type)) {
            throw std::invalid_argument(
                "tern: static_files extra_mime_types has an invalid "
                "Content-Type for '" +
                ext + "'");
        }
        extra_.insert_or_assign(lowercase(key), type);
    }
}

std::string_view mime_types::builtin(std::string_view lowercase_extension) noexcept {
    const auto it =
        std::lower_bound(builtin_types.begin(), builtin_types.end(), lowercase_extension,
                         [](const entry& e, std::string_view key) { return e.first < key; });
    if (it == builtin_types.end() || it->first != lowercase_extension) return {};
    return it->second;
}

std::string_view mime_types::lookup(std::string_view file_name) const {
    const std::size_t dot = file_name.rfind('.');
    if (dot == std::string_view::npos || dot == 0 || dot + 1 == file_name.size()) {
        return default_mime_type;
    }
    // Lower-cased on the stack: extensions are short, and this runs for every file served.
    const std::string_view raw = file_name.substr(dot + 1);
    char small[16];
    std::string large;
    std::string_view ext;
    if (raw.size() <= sizeof small) {
        for (std::size_t i = 0; i < raw.size(); ++i) small[i] = ascii_lower(raw[i]);
        ext = std::string_view(small, raw.size());
    } else {
        large = lowercase(raw);
        ext = large;
    }
    if (!extra_.empty()) {
        const auto it = extra_.find(ext);
        if (it != extra_.end()) return it->second;
    }
    const std::string_view type = builtin(ext);
    return type.empty() ? default_mime_type : type;
}

}  // namespace tern::detail

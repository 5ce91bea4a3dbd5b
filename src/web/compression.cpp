#include "web/compression.hpp"

#include "web/compressed_source.hpp"

#include "http/header_values.hpp"
#include "http/request.hpp"
#include "http/token.hpp"

#include <algorithm>
#include <array>
#include <cstddef>

namespace tern::detail {

namespace {

// Subtypes of application/ that are text or an uncompressed binary format (compared
// case-insensitively); other application/ types are taken as already compressed or opaque.
constexpr std::array compressible_application_types = {
    std::string_view("ecmascript"),
    std::string_view("graphql"),
    std::string_view("javascript"),
    std::string_view("json"),
    std::string_view("toml"),
    std::string_view("vnd.ms-fontobject"),
    std::string_view("wasm"),
    std::string_view("x-javascript"),
    std::string_view("x-www-form-urlencoded"),
    std::string_view("x-yaml"),
    std::string_view("xml"),
    std::string_view("yaml"),
};

bool member_is(std::string_view list, std::string_view token) noexcept {
    return !for_each_element(list, [&](std::string_view m) { return !iequals(m, token); });
}

bool body_allowed(int status) noexcept {
    // RFC 9110 6.4.1: no content in 1xx, 204 and 304; 206 bodies are byte ranges of the
    // unencoded representation and cannot be re-encoded afterwards.
    return status >= 200 && status != 204 && status != 206 && status != 304;
}

// Content-Encoding for `c`, and the handler's strong ETag made weak.
void mark_encoded(response& res, coding c) {
    res.fields.emplace_back("Content-Encoding", std::string(coding_name(c)));
    // RFC 9110 8.8.3: a strong entity tag names one exact sequence of bytes, and the encoded
    // body is another one, so the handler's tag can only stand as a weak one.
    for (auto& [name, value] : res.fields) {
        if (iequals(name, "ETag") && value.starts_with('"')) value.insert(0, "W/");
    }
}

bool has_response_field(const response& res, std::string_view name) noexcept {
    return std::any_of(res.fields.begin(), res.fields.end(),
                       [name](const auto& f) { return iequals(f.first, name); });
}

}  // namespace

bool is_compressible_type(std::string_view content_type) noexcept {
    const std::string_view media = media_type(content_type);
    const std::size_t slash = media.find('/');
    if (slash == std::string_view::npos) return false;
    const std::string_view type = media.substr(0, slash);
    const std::string_view subtype = media.substr(slash + 1);
    if (subtype.empty()) return false;

    if (iequals(type, "text")) return true;
    // Structured syntax suffixes (RFC 6839): ld+json, rss+xml, svg+xml, but not epub+zip.
    const std::size_t plus = subtype.rfind('+');
    if (plus != std::string_view::npos) {
        const std::string_view suffix = subtype.substr(plus + 1);
        return iequals(suffix, "json") || iequals(suffix, "xml");
    }
    if (iequals(type, "application")) {
        return std::any_of(compressible_application_types.begin(),
                           compressible_application_types.end(),
                           [subtype](std::string_view t) { return iequals(t, subtype); });
    }
    // TrueType and OpenType are uncompressed; woff and woff2 are compressed already.
    if (iequals(type, "font")) return iequals(subtype, "ttf") || iequals(subtype, "otf");
    return false;
}

void compress_response(response& res, std::span<const header_field> request_headers,
                       const compression_config& config, bool head, stream_coder_slots* slots,
                       whole_body_coders* coders) {
    if (res.file.file) return;
    if (res.source) {
        compress_stream(res, request_headers, config, head, slots);
        return;
    }
    if (res.body.size() < config.min_size || res.body.size() > config.max_size) return;
    if (!body_allowed(res.status)) return;
    if (!is_compressible_type(res.content_type)) return;
    if (has_response_field(res, "Content-Encoding")) return;

    // RFC 9110 12.5.5: the choice depends on Accept-Encoding even when it falls on identity.
    add_vary(res, "Accept-Encoding");
    const coding chosen = choose_coding(request_headers, config);
    if (chosen == coding::identity) return;
    // A HEAD sends no body: coding one only to learn its length would cost a GET's CPU
    // for nothing (60 pipelined HEADs of a 1 MiB text once held a loop for seconds).
    if (head) return;

    std::string compressed;
    if (!encode_whole(chosen, res.body, coding_level(chosen, config), compressed, coders)) {
        return;
    }
    if (compressed.size() >= res.body.size()) return;
    res.body.swap(compressed);
    mark_encoded(res, chosen);
}

void compress_stream(response& res, std::span<const header_field> request_headers,
                     const compression_config& config, bool head, stream_coder_slots* slots) {
    if (!body_allowed(res.status)) return;
    if (!is_compressible_type(res.content_type)) return;
    // An event stream stays as it is: browsers take it compressed, but proxies and clients
    // reading events line by line often do not (docs/sse.md).
    if (iequals(media_type(res.content_type), "text/event-stream")) return;
    if (has_response_field(res, "Content-Encoding")) return;
    add_vary(res, "Accept-Encoding");
    const coding chosen = choose_coding(request_headers, config);
    if (chosen == coding::identity || head) return;
    auto compressed = compressed_source(res.source, chosen, coding_level(chosen, config), slots);
    // Every slot taken (compression_config::max_streams), or the library could not start:
    // uncompressed then.
    if (!compressed) return;
    res.source = std::move(compressed);
    mark_encoded(res, chosen);
}

void add_vary(response& res, std::string_view token) {
    auto first = res.fields.end();
    for (auto it = res.fields.begin(); it != res.fields.end(); ++it) {
        if (!iequals(it->first, "Vary")) continue;
        // "*" already says the response varies on everything (RFC 9110 12.5.5).
        if (member_is(it->second, "*") || member_is(it->second, token)) return;
        if (first == res.fields.end()) first = it;
    }
    if (first == res.fields.end()) {
        res.fields.emplace_back("Vary", std::string(token));
        return;
    }
    std::string& value = first->second;
    if (trim_ows(value).empty()) {
        value.assign(token);
    } else {
        value.append(", ").append(token);
    }
}

}  // namespace tern::detail

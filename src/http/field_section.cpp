#include "http/field_section.hpp"
#include "http/token.hpp"

#include <string>

namespace tern::detail {

namespace {

using namespace std::string_view_literals;

// "name: value\r\n": a field costs what it would on an HTTP/1 head.
constexpr std::size_t http1_line_overhead = 4;

}  // namespace

request_head::piece request_head::keep(std::string_view text) {
    // A head is bounded by the limits (kilobytes), far below 4 GiB.
    const piece p{static_cast<std::uint32_t>(text_.size()),
                  static_cast<std::uint32_t>(text.size())};
    // One allocation for a usual head (an empty string's capacity is its inline buffer's,
    // never 0, so it is the first piece that reserves).
    if (text_.empty()) text_.reserve(256);
    text_.append(text);
    return p;
}

void request_head::add(std::string_view name, std::string_view value) {
    if (verdict_ != verdict::ok) return;  // refused: nothing more is kept
    if (name.starts_with(':')) {
        // nghttp2 and nghttp3 let each pseudo-field through once, before the regular ones.
        if (name == ":method") {
            method_ = keep(value);
        } else if (name == ":path") {
            path_ = keep(value);
        } else if (name == ":authority") {
            authority_ = keep(value);
            bytes_ += 4 + value.size() + http1_line_overhead;  // as "Host: value\r\n"
        }
        // :scheme is checked by the library and not kept (the connection knows it is TLS or not).
        if (std::size_t{method_.size} + path_.size + 1 > limits_.max_line_size) {
            verdict_ = verdict::line_too_long;
        }
        if (bytes_ > limits_.max_header_size) verdict_ = verdict::too_large;
        return;
    }
    if (++count_ > limits_.max_header_count) {
        verdict_ = verdict::too_many_fields;
        return;
    }
    bytes_ += name.size() + value.size() + http1_line_overhead;
    if (bytes_ > limits_.max_header_size) {
        verdict_ = verdict::too_large;
        return;
    }
    const piece n = keep(name);
    if (fields_.empty()) fields_.reserve(16);  // one allocation for a usual head
    fields_.push_back({n, keep(value)});
}

void request_head::add_trailer(std::string_view name, std::string_view value) {
    if (verdict_ != verdict::ok) return;
    if (fields_.size() + ++trailer_count_ > limits_.max_header_count) {
        verdict_ = verdict::too_many_fields;
        return;
    }
    trailer_bytes_ += name.size() + value.size() + http1_line_overhead;
    if (trailer_bytes_ > limits_.max_header_size) {
        verdict_ = verdict::too_large;
        return;
    }
    const auto at = static_cast<std::uint32_t>(trailer_text_.size());
    trailer_text_.append(name).append(value);
    trailers_.push_back(
        {{at, static_cast<std::uint32_t>(name.size())},
         {static_cast<std::uint32_t>(at + name.size()), static_cast<std::uint32_t>(value.size())}});
}

void request_head::fill_trailers(request& req) {
    if (trailers_.empty()) return;
    req.trailer_storage = std::move(trailer_text_);
    trailer_text_ = std::string();
    const std::string_view all(req.trailer_storage);
    req.trailers.clear();
    req.trailers.reserve(trailers_.size());
    for (const auto& f : trailers_) {
        req.trailers.push_back(
            {all.substr(f.name.at, f.name.size), all.substr(f.value.at, f.value.size)});
    }
    trailers_.clear();
}

int request_head::refusal_status() const noexcept {
    switch (verdict_) {
        case verdict::ok:
            return 0;
        case verdict::too_many_fields:
        case verdict::too_large:
            return 431;
        case verdict::line_too_long:
            return 414;
    }
    return 0;
}

bool request_head::fill(request& req, int major) {
    req.clear();
    if (method_.size == 0 || path_.size == 0) return false;
    bool has_host = false;
    std::size_t cookies = 0;
    for (const auto& f : fields_) {
        const std::string_view name = view(f.name);
        if (name == "host") {
            if (view(f.value) != view(authority_) && authority_.size != 0) return false;
            has_host = true;
        }
        if (name == "cookie") ++cookies;
    }
    // RFC 9113 8.2.3: a client may split Cookie into several fields; an HTTP/1 reader
    // expects one, joined with "; ", which goes at the end of the text.
    piece joined{};
    if (cookies > 1) {
        joined.at = static_cast<std::uint32_t>(text_.size());
        bool first = true;
        for (const auto& f : fields_) {
            if (view(f.name) != "cookie") continue;
            if (!first) text_.append("; ");
            text_.append(view(f.value));
            first = false;
        }
        joined.size = static_cast<std::uint32_t>(text_.size() - joined.at);
    }
    // The text is complete: it becomes the request's storage (moving a string keeps its
    // characters where they are), and the views are made into it.
    req.storage = std::move(text_);
    text_ = std::string();
    const std::string_view all(req.storage);
    auto in = [&all](piece p) { return all.substr(p.at, p.size); };
    req.method = in(method_);
    req.target = in(path_);
    const auto q = req.target.find('?');
    req.path = req.target.substr(0, q);
    req.query = q == std::string_view::npos ? std::string_view{} : req.target.substr(q + 1);
    req.version_major = static_cast<decltype(req.version_major)>(major);
    req.version_minor = 0;
    req.is_head = req.method == "HEAD";
    req.keep_alive = true;
    req.headers.reserve(fields_.size() + 1);
    if (!has_host && authority_.size != 0) req.headers.push_back({"Host", in(authority_)});
    bool cookie_done = false;
    for (const auto& f : fields_) {
        const std::string_view name = in(f.name);
        if (cookies > 1 && name == "cookie") {
            if (cookie_done) continue;
            cookie_done = true;
            req.headers.push_back({name, in(joined)});
            continue;
        }
        req.headers.push_back({name, in(f.value)});
    }
    return true;
}

bool is_connection_specific(std::string_view name) noexcept {
    // By length first: most names a response carries have none of these lengths.
    switch (name.size()) {
        case 2:
            return iequals(name, "te"sv);
        case 7:
            return iequals(name, "upgrade"sv);
        case 10:
            return iequals(name, "connection"sv) || iequals(name, "keep-alive"sv);
        case 16:
            return iequals(name, "proxy-connection"sv);
        case 17:
            return iequals(name, "transfer-encoding"sv);
        default:
            return false;
    }
}

}  // namespace tern::detail

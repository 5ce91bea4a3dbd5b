#include "h2/fields.hpp"

#include "http/date.hpp"
#include "http/status.hpp"
#include "http/token.hpp"

#include <array>
#include <string>

namespace tern::detail {

namespace {

using namespace std::string_view_literals;

// "name: value\r\n": a field costs what it would on an HTTP/1 head.
constexpr std::size_t http1_line_overhead = 4;

}  // namespace

void request_head::add(std::string_view name, std::string_view value) {
    if (verdict_ != verdict::ok) return;  // refused: nothing more is kept
    if (name.starts_with(':')) {
        if (name == ":method") {
            method_.assign(value);
        } else if (name == ":path") {
            path_.assign(value);
        } else if (name == ":authority") {
            authority_.assign(value);
            bytes_ += 4 + value.size() + http1_line_overhead;  // as "Host: value\r\n"
        }
        // :scheme is checked by nghttp2 and not kept (the connection knows it is TLS or not).
        if (method_.size() + path_.size() + 1 > limits_.max_line_size) {
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
    fields_.emplace_back(name, value);
}

void request_head::add_trailer(std::string_view name, std::string_view value) {
    if (verdict_ != verdict::ok) return;
    if (fields_.size() + ++trailer_count_ > limits_.max_header_count) {
        verdict_ = verdict::too_many_fields;
        return;
    }
    trailer_bytes_ += name.size() + value.size() + http1_line_overhead;
    if (trailer_bytes_ > limits_.max_header_size) verdict_ = verdict::too_large;
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

bool request_head::fill(request& req) const {
    req.clear();
    if (method_.empty() || path_.empty()) return false;
    // Everything the views point at goes into storage first, then the views are made: the
    // storage does not move once it is complete.
    bool has_host = false;
    std::size_t cookies = 0;
    std::size_t size = method_.size() + path_.size() + authority_.size() + 4;
    for (const auto& [name, value] : fields_) {
        size += name.size() + value.size() + 2;
        if (name == "host") {
            if (value != authority_ && !authority_.empty()) return false;
            has_host = true;
        }
        if (name == "cookie") ++cookies;
    }
    std::string& s = req.storage;
    s.reserve(size);
    struct span {
        std::size_t at, size;
    };
    auto put = [&s](std::string_view text) {
        const span where{s.size(), text.size()};
        s.append(text);
        return where;
    };
    const span method = put(method_);
    const span target = put(path_);
    std::vector<std::pair<span, span>> spans;
    spans.reserve(fields_.size() + 1);
    if (!has_host && !authority_.empty()) spans.emplace_back(put("Host"), put(authority_));
    // RFC 9113 8.2.3: a client may split Cookie into several fields; an HTTP/1 reader
    // expects one, joined with "; ".
    bool cookie_done = false;
    for (const auto& [name, value] : fields_) {
        if (name == "cookie" && cookies > 1) {
            if (cookie_done) continue;
            cookie_done = true;
            const span n = put("cookie");
            const std::size_t at = s.size();
            bool first = true;
            for (const auto& [other, text] : fields_) {
                if (other != "cookie") continue;
                if (!first) s.append("; ");
                s.append(text);
                first = false;
            }
            spans.emplace_back(n, span{at, s.size() - at});
            continue;
        }
        spans.emplace_back(put(name), put(value));
    }
    const std::string_view all(s);
    auto view = [&all](span sp) { return all.substr(sp.at, sp.size); };
    req.method = view(method);
    req.target = view(target);
    const auto q = req.target.find('?');
    req.path = req.target.substr(0, q);
    req.query = q == std::string_view::npos ? std::string_view{} : req.target.substr(q + 1);
    req.version_major = 2;
    req.version_minor = 0;
    req.is_head = req.method == "HEAD";
    req.keep_alive = true;
    req.headers.reserve(spans.size());
    for (const auto& [n, v] : spans) req.headers.push_back({view(n), view(v)});
    return true;
}

bool is_connection_specific(std::string_view name) noexcept {
    static constexpr std::array<std::string_view, 6> forbidden = {
        "connection"sv,        "keep-alive"sv, "proxy-connection"sv,
        "transfer-encoding"sv, "upgrade"sv,    "te"sv};
    for (auto f : forbidden) {
        if (iequals(name, f)) return true;
    }
    return false;
}

void response_fields(const response& res, std::vector<std::pair<std::string, std::string>>& out) {
    out.clear();
    const bool bodyless = status_forbids_body(res.status);
    const bool streamed = res.source != nullptr;
    const std::uint64_t length = res.file.file ? res.file.length : res.body.size();
    out.emplace_back(":status", std::to_string(res.status));
    out.emplace_back("date", http_date_now());
    if (!bodyless && !res.content_type.empty() &&
        (streamed || !res.body.empty() || res.file.length != 0)) {
        out.emplace_back("content-type", res.content_type);
    }
    if (!bodyless && !streamed) out.emplace_back("content-length", std::to_string(length));
    for (const auto& [name, value] : res.fields) {
        if (is_connection_specific(name)) continue;
        std::string lower(name);
        for (char& c : lower) c = ascii_lower(c);
        out.emplace_back(std::move(lower), value);
    }
}

}  // namespace tern::detail

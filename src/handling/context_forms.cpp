// The parts of tern::context that read forms, uploads and cookies and write cookies.

#include <tern/context.hpp>
#include <tern/http_error.hpp>

#include "handling/exchange.hpp"
#include "http/header_values.hpp"
#include "http/request.hpp"
#include "http/token.hpp"
#include "routing/url_decode.hpp"
#include "web/cookies.hpp"
#include "web/multipart.hpp"

#include <chrono>
#include <string>

namespace tern {

namespace {

bool is_urlencoded_form(const detail::request& req) noexcept {
    const auto type = req.header("content-type");
    return type && detail::iequals(detail::media_type(*type), "application/x-www-form-urlencoded");
}

// The multipart parts of the request, parsed once per request; empty when the body is not
// multipart/form-data. A malformed body is a 400, an oversized file a 413.
const std::vector<detail::form_part>& parts_of(detail::exchange& ex) {
    auto& s = ex.scratch;
    if (s.parts_parsed) return s.parts;
    s.parts.clear();
    const auto type = ex.req.header("content-type");
    const bool is_multipart =
        type && detail::iequals(detail::media_type(*type), "multipart/form-data");
    const auto boundary = is_multipart ? detail::multipart_boundary(*type) : std::nullopt;
    // A body declared multipart/form-data that cannot be split is malformed, not "no form":
    // reading it as empty would hide the client's fields and files from the handler.
    if (is_multipart && !boundary) {
        throw bad_request("multipart/form-data without a valid boundary parameter");
    }
    if (boundary) {
        detail::multipart_limits limits;
        limits.max_file_size = ex.env.max_upload_file_size;
        std::vector<detail::multipart_part> parts;
        std::string message;
        switch (detail::parse_multipart(ex.req.body_view(), *boundary, limits, parts, &message)) {
            case detail::multipart_status::ok:
                break;
            case detail::multipart_status::malformed:
                throw bad_request(message);
            case detail::multipart_status::file_too_large:
            case detail::multipart_status::too_many_parts:
            case detail::multipart_status::header_too_large:  // not from parse_multipart
                throw content_too_large(message);
        }
        for (auto& p : parts) {
            // An empty file input: browsers send filename="" and no bytes. Not an upload.
            if (p.has_filename && p.filename.empty() && p.data.empty()) continue;
            auto& out = s.parts.emplace_back();
            out.name = std::move(p.name);
            out.is_file = p.has_filename;
            out.filename = std::move(p.filename);
            out.content_type = std::move(p.content_type);
            out.data = p.data;
        }
    }
    s.parts_parsed = true;
    return s.parts;
}

uploaded_file to_upload(const detail::form_part& p) {
    uploaded_file f;
    f.field = p.name;
    f.filename = detail::safe_filename(p.filename);
    f.raw_filename = p.filename;
    f.content_type = p.content_type;
    f.content = p.data;
    return f;
}

// Calls fn(value) for each value of form field `name`, in order, until fn returns false.
template <class Fn>
void for_each_form_value(detail::exchange& ex, std::string_view name, Fn&& fn) {
    if (is_urlencoded_form(ex.req)) {
        bool more = true;
        std::string key;
        detail::for_each_query_pair(ex.req.body_view(),
                                    [&](std::string_view k, std::string_view v) {
                                        if (!more) return;
                                        detail::url_decode(k, key, true);
                                        if (key != name) return;
                                        std::string value;
                                        detail::url_decode(v, value, true);
                                        more = fn(std::move(value));
                                    });
        return;
    }
    for (const auto& p : parts_of(ex)) {
        if (!p.is_file && p.name == name && !fn(std::string(p.data))) return;
    }
}

}  // namespace

// ---- forms and uploads ---------------------------------------------------------------------

std::optional<std::string> context::form_param(std::string_view name) const {
    std::optional<std::string> found;
    for_each_form_value(*ex_, name, [&](std::string value) {
        found = std::move(value);
        return false;
    });
    return found;
}

std::vector<std::string> context::form_params(std::string_view name) const {
    std::vector<std::string> values;
    for_each_form_value(*ex_, name, [&](std::string value) {
        values.push_back(std::move(value));
        return true;
    });
    return values;
}

std::optional<uploaded_file> context::uploaded_file(std::string_view name) const {
    for (const auto& p : parts_of(*ex_)) {
        if (p.is_file && p.name == name) return to_upload(p);
    }
    return std::nullopt;
}

std::vector<uploaded_file> context::uploaded_files(std::string_view name) const {
    std::vector<tern::uploaded_file> files;
    for (const auto& p : parts_of(*ex_)) {
        if (p.is_file && p.name == name) files.push_back(to_upload(p));
    }
    return files;
}

std::vector<uploaded_file> context::uploaded_files() const {
    std::vector<tern::uploaded_file> files;
    for (const auto& p : parts_of(*ex_)) {
        if (p.is_file) files.push_back(to_upload(p));
    }
    return files;
}

// ---- cookies -------------------------------------------------------------------------------

std::optional<std::string_view> context::cookie(std::string_view name) const {
    std::vector<detail::cookie_pair> pairs;
    for (const auto& h : ex_->req.headers) {
        if (!detail::iequals(h.name, "cookie")) continue;
        pairs.clear();
        detail::parse_cookie_header(h.value, pairs);
        for (const auto& c : pairs) {
            if (c.name == name) return c.value;
        }
    }
    return std::nullopt;
}

std::vector<std::pair<std::string_view, std::string_view>> context::cookies() const {
    std::vector<detail::cookie_pair> pairs;
    for (const auto& h : ex_->req.headers) {
        if (detail::iequals(h.name, "cookie")) detail::parse_cookie_header(h.value, pairs);
    }
    std::vector<std::pair<std::string_view, std::string_view>> out;
    out.reserve(pairs.size());
    for (const auto& c : pairs) out.emplace_back(c.name, c.value);
    return out;
}

context& context::cookie(std::string_view name, std::string_view value,
                         const cookie_options& options) {
    // Several Set-Cookie fields may go out (RFC 6265 3): each is its own field line.
    ex_->res.fields.emplace_back("Set-Cookie", detail::format_set_cookie(name, value, options));
    return *this;
}

context& context::remove_cookie(std::string_view name, const cookie_options& options) {
    cookie_options gone = options;
    gone.max_age = std::chrono::seconds(0);
    gone.expires = std::chrono::system_clock::time_point{};  // 1 Jan 1970
    return cookie(name, "", gone);
}

}  // namespace tern

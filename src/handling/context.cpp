#include <tern/context.hpp>
#include <tern/http_error.hpp>

#include "handling/exchange.hpp"
#include "handling/held_exchange.hpp"
#include "handling/streamed_body.hpp"
#include "http/spooled_body.hpp"
#include "http/token.hpp"
#include "http/trailer_fields.hpp"
#include "routing/url_decode.hpp"

#include <stdexcept>
#include <string>

namespace tern {

using detail::has_control;
using detail::iequals;
using detail::is_token;

// ---- request ---------------------------------------------------------------------------

std::string_view context::method() const noexcept { return ex_->req.method; }

std::string_view context::path() const noexcept { return ex_->req.path; }

std::string_view context::query_string() const noexcept { return ex_->req.query; }

std::string_view context::protocol() const noexcept {
    if (ex_->req.version_major == 2) return "HTTP/2";
    if (ex_->req.version_major == 3) return "HTTP/3";
    return ex_->req.version_minor == 0 ? "HTTP/1.0" : "HTTP/1.1";
}

std::string_view context::path_param(std::string_view name) const {
    const auto& s = ex_->scratch;
    const auto& params = ex_->filter_params ? s.filter_params : s.params;
    const auto& decoded = ex_->filter_params ? s.filter_decoded : s.decoded;
    for (std::size_t i = 0; i < params.size(); ++i) {
        if (params[i].name == name) return decoded[i];
    }
    throw std::out_of_range(
        std::string(ex_->filter_params ? "tern: the filter's pattern" : "tern: the matched route") +
        " has no path parameter '" + std::string(name) + "'");
}

std::optional<std::string> context::query_param(std::string_view name) const {
    return detail::find_query_param(ex_->req.query, name);
}

std::vector<std::string> context::query_params(std::string_view name) const {
    std::vector<std::string> values;
    std::string key;
    detail::for_each_query_pair(ex_->req.query, [&](std::string_view k, std::string_view v) {
        detail::url_decode(k, key, true);
        if (key == name) detail::url_decode(v, values.emplace_back(), true);
    });
    return values;
}

std::optional<std::string_view> context::header(std::string_view name) const noexcept {
    return ex_->req.header(name);
}

std::span<const header_field> context::headers() const noexcept { return ex_->req.headers; }

std::optional<std::string_view> context::trailer(std::string_view name) const noexcept {
    return ex_->req.trailer(name);
}

std::span<const header_field> context::trailers() const noexcept { return ex_->req.trailers; }

std::string_view context::body() const noexcept { return ex_->req.body_view(); }

int context::body_fd() const noexcept { return ex_->req.spooled ? ex_->req.spooled->fd() : -1; }

std::string context::ip() const {
    const auto& behind_proxy = ex_->scratch.client_ip;
    return behind_proxy.empty() ? std::string(ex_->remote_ip) : behind_proxy;
}

std::string context::peer_ip() const { return std::string(ex_->remote_ip); }

std::string_view context::request_id() const noexcept { return ex_->scratch.request_id; }

std::string_view context::scheme() const noexcept { return ex_->req.secure ? "https" : "http"; }

std::string_view context::client_certificate() const noexcept { return ex_->req.client_subject; }

// ---- response --------------------------------------------------------------------------

int context::status() const noexcept { return ex_->res.status; }

context& context::status(int code) {
    // RFC 9110 15: "All valid status codes are within the range of 100 to 599". A client
    // may treat anything else as a broken response; refuse it here, where the bug is.
    if (code < 100 || code > 599) {
        throw std::invalid_argument("tern: status " + std::to_string(code) +
                                    " is outside 100..599");
    }
    // RFC 9110 15.2: a 1xx is interim; sent as the answer, the client would wait for the
    // real one and read the next response in its place (and a proxy seeing 101 would open a
    // tunnel). tern sends 100 Continue itself.
    if (code < 200) {
        throw std::invalid_argument("tern: status " + std::to_string(code) +
                                    " is informational (1xx) and cannot be a final response");
    }
    ex_->res.status = code;
    return *this;
}

context& context::content_type(std::string_view type) {
    if (has_control(type)) {
        throw std::invalid_argument("tern: Content-Type has a control character");
    }
    ex_->res.content_type.assign(type);
    return *this;
}

context& context::header(std::string_view name, std::string_view value) {
    return set_header(name, value, false);
}

context& context::add_header(std::string_view name, std::string_view value) {
    return set_header(name, value, true);
}

context& context::set_header(std::string_view name, std::string_view value, bool add) {
    if (!is_token(name)) {
        throw std::invalid_argument("tern: '" + std::string(name) + "' is not a header name");
    }
    if (has_control(value)) {
        throw std::invalid_argument("tern: the value of header '" + std::string(name) +
                                    "' has a control character");
    }
    if (iequals(name, "content-length") || iequals(name, "transfer-encoding") ||
        iequals(name, "date")) {
        throw std::invalid_argument("tern: header '" + std::string(name) + "' is managed by tern");
    }
    if (iequals(name, "content-type")) return content_type(value);
    if (iequals(name, "connection")) {
        // The framing layer owns Connection; the one thing a handler may ask is a close.
        if (!iequals(value, "close")) {
            throw std::invalid_argument("tern: only 'Connection: close' may be set");
        }
        ex_->res.close = true;
        return *this;
    }
    if (!add) {
        for (auto& [n, v] : ex_->res.fields) {
            if (iequals(n, name)) {
                v.assign(value);
                return *this;
            }
        }
    }
    ex_->res.fields.emplace_back(std::string(name), std::string(value));
    return *this;
}

context& context::trailer(std::string_view name, std::string_view value) {
    if (const char* why = detail::trailer_refusal(name, value)) {
        throw std::invalid_argument("tern: trailer '" + std::string(name) + "' " + why);
    }
    detail::set_trailer(ex_->res.trailers, name, value);
    return *this;
}

context& context::header(std::string_view name, std::string_view value, keep_on_error_t) {
    if (iequals(name, "content-type") || iequals(name, "connection")) {
        throw std::invalid_argument("tern: header '" + std::string(name) +
                                    "' cannot be kept on error responses");
    }
    header(name, value);
    auto& kept = ex_->scratch.kept_fields;
    for (auto& [n, v] : kept) {
        if (iequals(n, name)) {
            v.assign(value);
            return *this;
        }
    }
    kept.emplace_back(std::string(name), std::string(value));
    return *this;
}

std::string_view context::result() const noexcept { return ex_->res.body; }

context& context::result(std::string body) {
    ex_->res.source.reset();  // a body replaces a stream (which is then told it is closed)
    ex_->res.body = std::move(body);
    ex_->app_body = true;
    return *this;
}

context& context::text(std::string body) {
    ex_->res.content_type = "text/plain; charset=utf-8";
    return result(std::move(body));
}

context& context::html(std::string body) {
    ex_->res.content_type = "text/html; charset=utf-8";
    return result(std::move(body));
}

context& context::json_text(std::string document) {
    ex_->res.content_type = "application/json";
    return result(std::move(document));
}

context& context::redirect(std::string_view location, int status) {
    if (status < 300 || status > 399) {
        throw std::invalid_argument("tern: redirect status " + std::to_string(status) +
                                    " is outside 300..399");
    }
    if (has_control(location)) {
        throw std::invalid_argument("tern: Location has a control character");
    }
    header("Location", location);
    ex_->res.status = status;
    ex_->res.content_type.clear();
    ex_->res.body.clear();
    ex_->res.source.reset();
    ex_->app_body = true;
    ex_->skip = true;
    return *this;
}

deferred context::defer() {
    if (ex_->port == nullptr || !ex_->in_handler) {
        throw std::logic_error(
            "tern: ctx.defer() works in a route handler on the event loop, once (not in a "
            "filter, an error handler, the request logger or a tern::blocking handler)");
    }
    auto held = std::make_shared<detail::held_exchange>(*ex_);
    ex_->held = held;
    ex_ = &held->state();  // this context goes on with the response it now holds
    return deferred(std::move(held));
}

response_stream context::stream() {
    auto source = std::make_shared<detail::streamed_body>(ex_->env.stream_buffer_size,
                                                          ex_->env.max_stream_buffer);
    auto& res = ex_->res;
    res.source = detail::streamed_body::tap(source);
    res.body.clear();
    res.file = {};
    ex_->app_body = true;  // the stream is the answer: error shaping leaves it alone
    return response_stream(std::move(source));
}

void context::skip_remaining() noexcept { ex_->skip = true; }

std::uint64_t context::response_length() const noexcept {
    return ex_->res.file.file ? ex_->res.file.length : ex_->res.body.size();
}

tern::error_cause context::error_cause() const noexcept { return ex_->scratch.cause; }

std::string_view context::error_message() const noexcept { return ex_->scratch.error_message; }

void context::set_attribute(std::string_view name, std::shared_ptr<void> value,
                            const std::type_info& type) {
    auto& all = ex_->scratch.attributes;
    for (auto& a : all) {
        if (a.name == name) {
            a.value = std::move(value);
            a.type = &type;
            return;
        }
    }
    all.push_back({std::string(name), std::move(value), &type});
}

void* context::find_attribute(std::string_view name, const std::type_info& type) const noexcept {
    for (const auto& a : ex_->scratch.attributes) {
        if (a.name == name) return *a.type == type ? a.value.get() : nullptr;
    }
    return nullptr;
}

void context::throw_bad_param(const char* kind, std::string_view name, std::string_view text,
                              const char* expected) {
    // The value is the client's; quote only a bounded piece of it back.
    constexpr std::size_t shown = 64;
    std::string message = std::string(kind) + " '" + std::string(name) + "' must be " + expected +
                          ", not '" + std::string(text.substr(0, shown)) +
                          (text.size() > shown ? "...'" : "'");
    throw bad_request(message);
}

}  // namespace tern

#include "http/request.hpp"

#include "http/buffers.hpp"
#include "http/spooled_body.hpp"
#include "http/token.hpp"

#include <cstdint>

namespace tern::detail {

std::optional<std::string_view> request::header(std::string_view name) const noexcept {
    for (const auto& h : headers) {
        if (iequals(h.name, name)) return h.value;
    }
    return std::nullopt;
}

std::optional<std::string_view> request::trailer(std::string_view name) const noexcept {
    for (const auto& h : trailers) {
        if (iequals(h.name, name)) return h.value;
    }
    return std::nullopt;
}

namespace {

// A view into `from` moved to the same place in `to`; a view elsewhere is returned as it is.
std::string_view moved(std::string_view v, const std::string& from,
                       const std::string& to) noexcept {
    if (v.empty()) return {};
    // Compared as addresses: a view elsewhere is not within [base, base + size).
    const auto at = reinterpret_cast<std::uintptr_t>(v.data());
    const auto begin = reinterpret_cast<std::uintptr_t>(from.data());
    if (at >= begin && at + v.size() <= begin + from.size()) {
        return {to.data() + (at - begin), v.size()};
    }
    return v;
}

}  // namespace

std::string_view rebase(std::string_view v, const request& from, const request& to) noexcept {
    return moved(v, from.storage, to.storage);
}

void copy_request(const request& from, request& to) {
    to.storage = from.storage;
    to.body = from.body;
    to.spooled = from.spooled;  // the file is read-only once complete: shared
    to.body_stream = from.body_stream;
    to.method = rebase(from.method, from, to);
    to.target = rebase(from.target, from, to);
    to.path = rebase(from.path, from, to);
    to.query = rebase(from.query, from, to);
    to.version_major = from.version_major;
    to.version_minor = from.version_minor;
    to.headers.clear();
    to.headers.reserve(from.headers.size());
    for (const auto& h : from.headers) {
        to.headers.push_back({rebase(h.name, from, to), rebase(h.value, from, to)});
    }
    to.trailer_storage = from.trailer_storage;
    to.trailers.clear();
    to.trailers.reserve(from.trailers.size());
    for (const auto& t : from.trailers) {
        to.trailers.push_back({moved(t.name, from.trailer_storage, to.trailer_storage),
                               moved(t.value, from.trailer_storage, to.trailer_storage)});
    }
    to.keep_alive = from.keep_alive;
    to.is_head = from.is_head;
    to.secure = from.secure;
    to.client_subject = from.client_subject;
}

std::string_view request::body_view() const noexcept {
    return spooled ? spooled->view() : std::string_view(body);
}

void request::clear() noexcept {
    method = target = path = query = {};
    version_major = 1;
    version_minor = 1;
    headers.clear();
    trailers.clear();
    clear_buffer(trailer_storage);
    clear_buffer(body);
    spooled.reset();
    body_stream.reset();
    keep_alive = true;
    is_head = false;
    secure = false;
    client_subject.clear();
    clear_buffer(storage);
}

}  // namespace tern::detail

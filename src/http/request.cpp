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

std::string_view rebase(std::string_view v, const request& from, const request& to) noexcept {
    if (v.empty()) return {};
    const char* base = from.storage.data();
    // Compared as addresses: a view elsewhere is not within [base, base + size).
    const auto at = reinterpret_cast<std::uintptr_t>(v.data());
    const auto begin = reinterpret_cast<std::uintptr_t>(base);
    if (at >= begin && at + v.size() <= begin + from.storage.size()) {
        return {to.storage.data() + (at - begin), v.size()};
    }
    return v;
}

void copy_request(const request& from, request& to) {
    to.storage = from.storage;
    to.body = from.body;
    to.spooled = from.spooled;  // the file is read-only once complete: shared
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
    clear_buffer(body);
    spooled.reset();
    keep_alive = true;
    is_head = false;
    secure = false;
    client_subject.clear();
    clear_buffer(storage);
}

}  // namespace tern::detail

#include "http/request.hpp"

#include "http/buffers.hpp"
#include "http/token.hpp"

namespace tern::detail {

bool iequals(std::string_view a, std::string_view b) noexcept {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i) {
        if (ascii_lower(a[i]) != ascii_lower(b[i])) return false;
    }
    return true;
}

std::optional<std::string_view> request::header(std::string_view name) const noexcept {
    for (const auto& h : headers) {
        if (iequals(h.name, name)) return h.value;
    }
    return std::nullopt;
}

void request::clear() noexcept {
    method = target = path = query = {};
    version_major = 1;
    version_minor = 1;
    headers.clear();
    clear_buffer(body);
    keep_alive = true;
    is_head = false;
    clear_buffer(storage);
}

}  // namespace tern::detail

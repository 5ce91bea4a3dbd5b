#include <tern/testing.hpp>

#include "testing/response_reader.hpp"

namespace tern::testing {

std::optional<std::string_view> response::header(std::string_view name) const {
    for (const testing::header& h : headers) {
        if (detail::iequals(h.name, name)) return std::string_view(h.value);
    }
    return std::nullopt;
}

std::vector<std::string_view> response::header_values(std::string_view name) const {
    std::vector<std::string_view> values;
    for (const testing::header& h : headers) {
        if (detail::iequals(h.name, name)) values.emplace_back(h.value);
    }
    return values;
}

}  // namespace tern::testing

#include "http/methods.hpp"

#include <llhttp.h>

namespace tern::detail {

bool is_known_method(std::string_view method) noexcept {
#define TERN_METHOD_NAME(num, name, string) #string,
    static constexpr std::string_view names[] = {HTTP_METHOD_MAP(TERN_METHOD_NAME)};
#undef TERN_METHOD_NAME
    for (auto name : names) {
        if (name == method) return true;
    }
    return false;
}

}  // namespace tern::detail

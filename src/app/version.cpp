#include <tern/version.hpp>

#define TERN_STRINGIFY_(x) #x
#define TERN_STRINGIFY(x) TERN_STRINGIFY_(x)

namespace tern {

const char* version() noexcept {
    return TERN_STRINGIFY(TERN_VERSION_MAJOR) "." TERN_STRINGIFY(
        TERN_VERSION_MINOR) "." TERN_STRINGIFY(TERN_VERSION_PATCH);
}

}  // namespace tern

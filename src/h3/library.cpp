#include "h3/library.hpp"

#include "loader/shared_library.hpp"

namespace tern::detail {

namespace {

nghttp3_functions load_nghttp3() {
    nghttp3_functions table;
#ifdef TERN_HTTP3_LINKED
    // Built with -DTERN_HTTP3_DLOPEN=OFF: libtern links nghttp3.
    TERN_NGHTTP3_FUNCTIONS(TERN_LINK_FUNCTION)
#else
    // libnghttp3, as the build found it (CMakeLists.txt reads its soname).
    constexpr const char* soname = TERN_NGHTTP3_SONAME;
    void* library = load_shared_library(soname, "HTTP/3 (Debian: libnghttp3-3; docs/http3.md)");
    TERN_NGHTTP3_FUNCTIONS(TERN_LOAD_FUNCTION)
#endif
    return table;
}

}  // namespace

const nghttp3_functions& load_nghttp3_library() {
    static const nghttp3_functions table = load_nghttp3();
    return table;
}

}  // namespace tern::detail

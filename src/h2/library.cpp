#include "h2/library.hpp"

#include "loader/shared_library.hpp"

namespace tern::detail {

namespace {

nghttp2_functions load_nghttp2() {
    nghttp2_functions table;
#ifdef TERN_CODECS_LINKED
    // Built with -DTERN_CODECS_DLOPEN=OFF: libtern links nghttp2 (a static binary that serves
    // HTTP/2 cannot dlopen it), and the table holds its functions.
    TERN_NGHTTP2_FUNCTIONS(TERN_LINK_FUNCTION)
#else
    // libnghttp2, as the build found it (CMakeLists.txt reads its soname).
    constexpr const char* soname = TERN_NGHTTP2_SONAME;
    void* library = load_shared_library(soname, "HTTP/2 (Debian: libnghttp2-14)");
    TERN_NGHTTP2_FUNCTIONS(TERN_LOAD_FUNCTION)
#endif
    return table;
}

}  // namespace

std::atomic<const nghttp2_functions*> nghttp2_loaded{nullptr};

const nghttp2_functions& load_nghttp2_library() {
    static const nghttp2_functions table = load_nghttp2();
    nghttp2_loaded.store(&table, std::memory_order_release);
    return table;
}

namespace {
std::atomic<bool> nghttp2_failed{false};
}  // namespace

bool nghttp2_available() noexcept {
    // Through the inline accessor: once loaded, a load and a branch per new connection, not
    // the loader's guard and its store to nghttp2_loaded again.
    return library_available(nghttp2_library, nghttp2_failed, "HTTP/2 connections are closed");
}

}  // namespace tern::detail

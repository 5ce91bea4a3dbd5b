#include "compression/library.hpp"

#include "loader/shared_library.hpp"

#include <atomic>

namespace tern::detail {

// Built with -DTERN_CODECS_DLOPEN=OFF, libtern links the three libraries (a static binary
// cannot dlopen them) and each table holds their functions; otherwise each is loaded by the
// soname CMakeLists.txt read from the file the linker would have taken.
#ifdef TERN_CODECS_LINKED
#define TERN_COMPRESSION_FILL TERN_LINK_FUNCTION
#define TERN_COMPRESSION_OPEN(soname, needed_for)
#else
#define TERN_COMPRESSION_FILL TERN_LOAD_FUNCTION
#define TERN_COMPRESSION_OPEN(library_soname, needed_for) \
    constexpr const char* soname = library_soname;        \
    void* library = load_shared_library(soname, needed_for);
#endif

const zlib_functions& zlib_library() {
    static const zlib_functions table_ = [] {
        zlib_functions table;
        TERN_COMPRESSION_OPEN(TERN_ZLIB_SONAME,
                              "gzip and permessage-deflate compression (Debian: zlib1g)")
        TERN_ZLIB_FUNCTIONS(TERN_COMPRESSION_FILL)
        return table;
    }();
    return table_;
}

const brotli_functions& brotli_library() {
    static const brotli_functions table_ = [] {
        brotli_functions table;
        TERN_COMPRESSION_OPEN(TERN_BROTLIENC_SONAME, "br compression (Debian: libbrotli1)")
        TERN_BROTLI_FUNCTIONS(TERN_COMPRESSION_FILL)
        return table;
    }();
    return table_;
}

const zstd_functions& zstd_library() {
    static const zstd_functions table_ = [] {
        zstd_functions table;
        TERN_COMPRESSION_OPEN(TERN_ZSTD_SONAME, "zstd compression (Debian: libzstd1)")
        TERN_ZSTD_FUNCTIONS(TERN_COMPRESSION_FILL)
        return table;
    }();
    return table_;
}

#undef TERN_COMPRESSION_OPEN
#undef TERN_COMPRESSION_FILL

namespace {

std::atomic<bool> zlib_failed{false};
std::atomic<bool> brotli_failed{false};
std::atomic<bool> zstd_failed{false};
constexpr const char* uncompressed = "left uncompressed";

}  // namespace

bool zlib_available() noexcept {
    return library_available(zlib_library, zlib_failed, uncompressed);
}
bool brotli_available() noexcept {
    return library_available(brotli_library, brotli_failed, uncompressed);
}
bool zstd_available() noexcept {
    return library_available(zstd_library, zstd_failed, uncompressed);
}

}  // namespace tern::detail

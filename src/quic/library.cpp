#include "quic/library.hpp"

#ifndef TERN_HTTP3_LINKED
#include <dlfcn.h>

#include <stdexcept>
#include <string>
#endif

namespace tern::detail {

namespace {

quic_functions load_quic() {
    quic_functions table;
#ifdef TERN_HTTP3_LINKED
    // Built with -DTERN_HTTP3_DLOPEN=OFF: libtern links GnuTLS, ngtcp2 and nghttp3 (a static
    // binary that serves HTTP/3 cannot dlopen them), and the table holds their functions.
#define TERN_QUIC_LINK(name) table.name = &::name;
    TERN_QUIC_FUNCTIONS(TERN_QUIC_LINK)
#undef TERN_QUIC_LINK
#else
    // ngtcp2's GnuTLS backend, as the build found it (CMakeLists.txt reads its soname): it
    // depends on libngtcp2 and libgnutls, so its handle reaches all three libraries' functions.
    constexpr const char* soname = TERN_NGTCP2_CRYPTO_SONAME;
    void* library = load_shared_library(soname);
#define TERN_QUIC_LOAD(name) \
    table.name =             \
        reinterpret_cast<decltype(table.name)>(shared_library_function(library, soname, #name));
    TERN_QUIC_FUNCTIONS(TERN_QUIC_LOAD)
#undef TERN_QUIC_LOAD
#endif
    return table;
}

#ifndef TERN_HTTP3_LINKED
std::string loader_reason() {
    const char* why = ::dlerror();
    return why != nullptr ? why : "unknown reason";
}
#endif

}  // namespace

const quic_functions& quic_library() {
    static const quic_functions table = load_quic();
    return table;
}

#ifndef TERN_HTTP3_LINKED

void* load_shared_library(const char* soname) {
    // RTLD_NOW: every function resolved here, once, rather than at the first packet. Never
    // closed: GnuTLS keeps global state until the process ends.
    void* library = ::dlopen(soname, RTLD_NOW | RTLD_LOCAL);
    if (library == nullptr) {
        throw std::runtime_error(std::string("tern: HTTP/3 needs ") + soname +
                                 " (Debian: libngtcp2-crypto-gnutls2, libngtcp2-9, libnghttp3-3, "
                                 "libgnutls30; docs/http3.md) but it could not be loaded: " +
                                 loader_reason());
    }
    return library;
}

void* shared_library_function(void* library, const char* soname, const char* name) {
    // dlsym on a handle also finds the functions of the libraries it depends on.
    void* function = ::dlsym(library, name);
    if (function == nullptr) {
        throw std::runtime_error(std::string("tern: ") + soname + " has no " + name + ": " +
                                 loader_reason());
    }
    return function;
}

#endif

}  // namespace tern::detail

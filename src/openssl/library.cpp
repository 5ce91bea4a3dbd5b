#include "openssl/library.hpp"

#include <openssl/opensslv.h>

#include "loader/shared_library.hpp"

namespace tern::detail {

namespace {

#ifdef TERN_OPENSSL_LINKED

// Built with -DTERN_OPENSSL_DLOPEN=OFF: libtern links libssl and libcrypto (a static binary
// that serves HTTPS cannot dlopen them), and the table holds their functions directly.
openssl_functions load() {
    openssl_functions table;
    TERN_OPENSSL_FUNCTIONS(TERN_LINK_FUNCTION)
    return table;
}

#else

#define TERN_STRINGIFY_(x) #x
#define TERN_STRINGIFY(x) TERN_STRINGIFY_(x)
// The library of the OpenSSL whose headers libtern was compiled against (libssl.so.3 for
// OpenSSL 3): its functions' types are the ones the table was declared with.
constexpr const char* libssl_name = "libssl.so." TERN_STRINGIFY(OPENSSL_SHLIB_VERSION);
#undef TERN_STRINGIFY
#undef TERN_STRINGIFY_

openssl_functions load() {
    // Never closed: OpenSSL keeps per-thread state until the process ends (libssl and
    // libcrypto are marked NODELETE anyway).
    constexpr const char* soname = libssl_name;
    void* library =
        load_shared_library(soname, "TLS, sessions, signed cookies or WebSocket (Debian: libssl3)");
    openssl_functions table;
    // dlsym on libssl's handle also finds libcrypto's functions: libcrypto is libssl's
    // dependency, and a handle's lookup covers the libraries it loaded.
    TERN_OPENSSL_FUNCTIONS(TERN_LOAD_FUNCTION)
    return table;
}

#endif

}  // namespace

const openssl_functions& openssl() {
    static const openssl_functions table = load();
    return table;
}

}  // namespace tern::detail

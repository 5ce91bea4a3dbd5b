#include "openssl/library.hpp"

#include <openssl/opensslv.h>

#ifndef TERN_OPENSSL_LINKED
#include <dlfcn.h>

#include <stdexcept>
#include <string>
#endif

namespace tern::detail {

namespace {

#ifdef TERN_OPENSSL_LINKED

// Built with -DTERN_OPENSSL_DLOPEN=OFF: libtern links libssl and libcrypto (a static binary
// that serves HTTPS cannot dlopen them), and the table holds their functions directly.
openssl_functions load() {
    openssl_functions table;
#define TERN_OPENSSL_LINK(name) table.name = &::name;
    TERN_OPENSSL_FUNCTIONS(TERN_OPENSSL_LINK)
#undef TERN_OPENSSL_LINK
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

std::string dl_reason() {
    const char* why = ::dlerror();
    return why != nullptr ? why : "unknown reason";
}

openssl_functions load() {
    // RTLD_NOW: every function of libssl and libcrypto resolved here, once, rather than at
    // the first TLS record. Never closed: OpenSSL keeps per-thread state until the process
    // ends (libssl and libcrypto are marked NODELETE anyway).
    void* library = ::dlopen(libssl_name, RTLD_NOW | RTLD_LOCAL);
    if (library == nullptr) {
        throw std::runtime_error(std::string("tern: OpenSSL is needed (TLS, sessions, signed "
                                             "cookies or WebSocket) but ") +
                                 libssl_name + " could not be loaded: " + dl_reason());
    }
    openssl_functions table;
    // dlsym on libssl's handle also finds libcrypto's functions: libcrypto is libssl's
    // dependency, and a handle's lookup covers the libraries it loaded.
#define TERN_OPENSSL_LOAD(name)                                                                \
    table.name = reinterpret_cast<decltype(table.name)>(::dlsym(library, #name));              \
    if (table.name == nullptr) {                                                               \
        throw std::runtime_error(std::string("tern: ") + libssl_name + " has no " #name ": " + \
                                 dl_reason());                                                 \
    }
    TERN_OPENSSL_FUNCTIONS(TERN_OPENSSL_LOAD)
#undef TERN_OPENSSL_LOAD
    return table;
}

#endif

}  // namespace

const openssl_functions& openssl() {
    static const openssl_functions table = load();
    return table;
}

}  // namespace tern::detail

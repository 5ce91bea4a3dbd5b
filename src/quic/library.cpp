#include "quic/library.hpp"

#include "loader/shared_library.hpp"

namespace tern::detail {

namespace {

quic_functions load_quic() {
    quic_functions table;
#ifdef TERN_HTTP3_LINKED
    // Built with -DTERN_HTTP3_DLOPEN=OFF: libtern links GnuTLS, ngtcp2 and nghttp3 (a static
    // binary that serves HTTP/3 cannot dlopen them), and the table holds their functions.
    TERN_QUIC_FUNCTIONS(TERN_LINK_FUNCTION)
#else
    // ngtcp2's GnuTLS backend, as the build found it (CMakeLists.txt reads its soname): it
    // depends on libngtcp2 and libgnutls, so its handle reaches all three libraries' functions.
    constexpr const char* soname = TERN_NGTCP2_CRYPTO_SONAME;
    void* library =
        load_shared_library(soname,
                            "HTTP/3 (Debian: libngtcp2-crypto-gnutls2, libngtcp2-9, libgnutls30; "
                            "docs/http3.md)");
    TERN_QUIC_FUNCTIONS(TERN_LOAD_FUNCTION)
#endif
    return table;
}

}  // namespace

const quic_functions& load_quic_library() {
    static const quic_functions table = load_quic();
    return table;
}

}  // namespace tern::detail

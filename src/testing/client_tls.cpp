#include "testing/client_tls.hpp"

#include <tern/testing.hpp>

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>

#include <memory>

namespace tern::testing::detail {

namespace {

struct ctx_free {
    void operator()(SSL_CTX* ctx) const noexcept { SSL_CTX_free(ctx); }
};

// Trusts the kit's certificate, and only it: a store of that one certificate, which is
// accepted as the anchor of the chain the server sends (X509_V_FLAG_PARTIAL_CHAIN: the
// certificate is pinned, not used as a CA).
void trust_kit_certificate(SSL_CTX* ctx) {
    const std::string& pem = test_certificate_pem();
    const std::unique_ptr<BIO, decltype(&BIO_free)> bio(
        BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())), &BIO_free);
    const std::unique_ptr<X509, decltype(&X509_free)> cert(
        bio ? PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr) : nullptr, &X509_free);
    X509_STORE* store = SSL_CTX_get_cert_store(ctx);
    if (!cert || X509_STORE_add_cert(store, cert.get()) != 1 ||
        X509_STORE_set_flags(store, X509_V_FLAG_PARTIAL_CHAIN) != 1) {
        throw client_error("tern::testing: cannot trust the kit's certificate: " +
                           openssl_errors("X509_STORE_add_cert"));
    }
}

std::unique_ptr<SSL_CTX, ctx_free> make_context() {
    std::unique_ptr<SSL_CTX, ctx_free> ctx(SSL_CTX_new(TLS_client_method()));
    if (!ctx || SSL_CTX_set_min_proto_version(ctx.get(), TLS1_2_VERSION) != 1 ||
        SSL_CTX_set_max_proto_version(ctx.get(), TLS1_3_VERSION) != 1) {
        throw client_error("tern::testing: cannot make a TLS client context: " +
                           openssl_errors("SSL_CTX_new"));
    }
    SSL_CTX_set_verify(ctx.get(), SSL_VERIFY_PEER, nullptr);
    // Bytes go through memory BIOs: a write always completes there, and what it wrote may
    // move before the next call.
    SSL_CTX_set_mode(ctx.get(),
                     SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
    trust_kit_certificate(ctx.get());
    return ctx;
}

}  // namespace

SSL_CTX* client_tls_context() {
    static const std::unique_ptr<SSL_CTX, ctx_free> shared = make_context();
    return shared.get();
}

std::string openssl_errors(const std::string& fallback) {
    std::string out;
    while (const unsigned long e = ERR_get_error()) {
        std::string text(256, '\0');
        ERR_error_string_n(e, text.data(), text.size());
        out += (out.empty() ? "" : "; ") + std::string(text.c_str());
    }
    return out.empty() ? fallback : out;
}

}  // namespace tern::testing::detail

#pragma once
// Owning handles for the OpenSSL objects that making and reading test certificates uses, and
// the text of OpenSSL's queued errors. Shared by the kit's certificate (test_certificate.cpp)
// and the wire tests' certificate authority (tests/support/test_certs.cpp), which both link
// libcrypto themselves; libtern does not include this (it loads OpenSSL at run time).

#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <cstddef>
#include <memory>
#include <string>

namespace tern::testing::openssl {

/// A unique_ptr deleter that calls OpenSSL's `Free`.
template <auto Free>
struct deleter {
    template <class T>
    void operator()(T* p) const noexcept {
        Free(p);
    }
};
using bio_ptr = std::unique_ptr<BIO, deleter<BIO_free_all>>;
using bn_ptr = std::unique_ptr<BIGNUM, deleter<BN_free>>;
using key_ptr = std::unique_ptr<EVP_PKEY, deleter<EVP_PKEY_free>>;
using x509_ptr = std::unique_ptr<X509, deleter<X509_free>>;
using extension_ptr = std::unique_ptr<X509_EXTENSION, deleter<X509_EXTENSION_free>>;

/// `message`, then ": " and this thread's queued OpenSSL errors joined by "; " (which it
/// takes off the queue); `message` alone when none is queued.
inline std::string with_errors(std::string message) {
    bool first = true;
    while (const unsigned long e = ERR_get_error()) {
        char text[256];
        ERR_error_string_n(e, text, sizeof text);
        message += first ? ": " : "; ";
        message += text;
        first = false;
    }
    return message;
}

/// The bytes written to a memory BIO so far.
inline std::string bio_text(BIO* bio) {
    char* data = nullptr;
    const long n = BIO_get_mem_data(bio, &data);
    return n > 0 ? std::string(data, static_cast<std::size_t>(n)) : std::string();
}

}  // namespace tern::testing::openssl

// The kit's HTTPS certificate (test_tls, test_certificate_pem): a self-signed ECDSA P-256
// certificate for localhost and 127.0.0.1 made with OpenSSL's key generation and X.509 code
// the first time it is asked for, then shared by the process. The key is PEM text in memory
// only: nothing is written to disk.

#include "testing/openssl_handles.hpp"

#include <tern/testing.hpp>

#include <openssl/pem.h>

#include <memory>
#include <stdexcept>
#include <string>

namespace tern::testing {

namespace {

using openssl::bio_ptr;
using openssl::bio_text;
using openssl::bn_ptr;
using openssl::extension_ptr;
using openssl::key_ptr;
using openssl::x509_ptr;

// Throws std::runtime_error naming the step and OpenSSL's queued errors.
[[noreturn]] void fail(const std::string& what) {
    throw std::runtime_error(
        openssl::with_errors("tern::testing: making the test certificate: " + what));
}

// Adds extension `nid` with its value in openssl.cnf syntax (e.g. "critical,CA:FALSE").
void add_extension(X509* cert, X509V3_CTX* ctx, int nid, const char* value) {
    const extension_ptr ext(X509V3_EXT_conf_nid(nullptr, ctx, nid, value));
    if (!ext || X509_add_ext(cert, ext.get(), -1) != 1) {
        fail(std::string("extension ") + OBJ_nid2sn(nid));
    }
}

// Serial, validity (an hour ago for 30 days), subject and issuer CN=localhost.
void set_identity(X509* cert, EVP_PKEY* key) {
    if (X509_set_version(cert, X509_VERSION_3) != 1) fail("X509_set_version");
    // 127 random bits with the top one set: positive, never zero.
    const bn_ptr serial(BN_new());
    if (!serial || BN_rand(serial.get(), 127, BN_RAND_TOP_ONE, BN_RAND_BOTTOM_ANY) != 1 ||
        BN_to_ASN1_INTEGER(serial.get(), X509_get_serialNumber(cert)) == nullptr) {
        fail("serial number");
    }
    constexpr long hour = 60 * 60;
    if (X509_gmtime_adj(X509_getm_notBefore(cert), -hour) == nullptr ||
        X509_gmtime_adj(X509_getm_notAfter(cert), 30 * 24 * hour - hour) == nullptr) {
        fail("validity");
    }
    X509_NAME* name = X509_get_subject_name(cert);
    const auto* cn = reinterpret_cast<const unsigned char*>("localhost");
    if (X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, cn, -1, -1, 0) != 1 ||
        X509_set_issuer_name(cert, name) != 1) {
        fail("subject");
    }
    if (X509_set_pubkey(cert, key) != 1) fail("X509_set_pubkey");
}

struct pem_pair {
    std::string cert;
    std::string key;
};

// A self-signed end-entity certificate: no keyUsage (so OpenSSL treats it as its own
// issuer and a client may trust it as the anchor of a one-certificate chain), serverAuth,
// the names localhost and 127.0.0.1.
pem_pair make_certificate() {
    const key_ptr key(EVP_EC_gen("P-256"));
    if (!key) fail("EVP_EC_gen(P-256)");
    const x509_ptr cert(X509_new());
    if (!cert) fail("X509_new");
    set_identity(cert.get(), key.get());
    X509V3_CTX ctx;
    X509V3_set_ctx(&ctx, cert.get(), cert.get(), nullptr, nullptr, 0);
    add_extension(cert.get(), &ctx, NID_basic_constraints, "critical,CA:FALSE");
    add_extension(cert.get(), &ctx, NID_ext_key_usage, "serverAuth");
    add_extension(cert.get(), &ctx, NID_subject_alt_name, "DNS:localhost,IP:127.0.0.1");
    add_extension(cert.get(), &ctx, NID_subject_key_identifier, "hash");
    add_extension(cert.get(), &ctx, NID_authority_key_identifier, "keyid:always");
    if (X509_sign(cert.get(), key.get(), EVP_sha256()) == 0) fail("X509_sign");

    const bio_ptr cert_bio(BIO_new(BIO_s_mem()));
    const bio_ptr key_bio(BIO_new(BIO_s_mem()));
    if (!cert_bio || !key_bio || PEM_write_bio_X509(cert_bio.get(), cert.get()) != 1 ||
        PEM_write_bio_PrivateKey(key_bio.get(), key.get(), nullptr, nullptr, 0, nullptr, nullptr) !=
            1) {
        fail("writing PEM");
    }
    return {bio_text(cert_bio.get()), bio_text(key_bio.get())};
}

// Made once, on first use; a static local's initialization is thread-safe.
const pem_pair& certificate() {
    static const pem_pair made = make_certificate();
    return made;
}

}  // namespace

tern::tls_config test_tls() {
    const pem_pair& pem = certificate();
    tern::tls_config settings;
    settings.certificates.push_back({.cert_pem = pem.cert, .key_pem = pem.key});
    return settings;
}

const std::string& test_certificate_pem() { return certificate().cert; }

}  // namespace tern::testing

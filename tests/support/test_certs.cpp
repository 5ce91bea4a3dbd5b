#include "support/test_certs.hpp"

#include "testing/openssl_handles.hpp"

#include <openssl/pem.h>

#include <cstring>
#include <fstream>
#include <memory>
#include <stdexcept>
#include <utility>

namespace tern_test {

namespace {

using tern::testing::openssl::bio_ptr;
using tern::testing::openssl::bio_text;
using tern::testing::openssl::bn_ptr;
using tern::testing::openssl::extension_ptr;
using tern::testing::openssl::key_ptr;
using tern::testing::openssl::x509_ptr;

// Throws std::runtime_error("test_certs: <what>: <OpenSSL's queued errors>").
[[noreturn]] void fail(const std::string& what) {
    throw std::runtime_error(tern::testing::openssl::with_errors("test_certs: " + what));
}

// A password callback that gives none, so reading an encrypted key fails instead of
// prompting on the terminal (OpenSSL's default callback).
int no_password(char*, int, int, void*) { return -1; }

bio_ptr memory_bio(const std::string& text) {
    bio_ptr bio(BIO_new_mem_buf(text.data(), static_cast<int>(text.size())));
    if (!bio) fail("BIO_new_mem_buf");
    return bio;
}

bio_ptr empty_bio() {
    bio_ptr bio(BIO_new(BIO_s_mem()));
    if (!bio) fail("BIO_new");
    return bio;
}

key_ptr read_key(const std::string& pem) {
    const bio_ptr bio = memory_bio(pem);
    key_ptr key(PEM_read_bio_PrivateKey(bio.get(), nullptr, no_password, nullptr));
    if (!key) fail("cannot read the private key PEM");
    return key;
}

x509_ptr read_cert(const std::string& pem) {
    const bio_ptr bio = memory_bio(pem);
    x509_ptr cert(PEM_read_bio_X509(bio.get(), nullptr, no_password, nullptr));
    if (!cert) fail("cannot read the certificate PEM");
    return cert;
}

std::string key_to_pem(EVP_PKEY* key) {
    const bio_ptr bio = empty_bio();
    if (PEM_write_bio_PrivateKey(bio.get(), key, nullptr, nullptr, 0, nullptr, nullptr) != 1) {
        fail("PEM_write_bio_PrivateKey");
    }
    return bio_text(bio.get());
}

std::string cert_to_pem(X509* cert) {
    const bio_ptr bio = empty_bio();
    if (PEM_write_bio_X509(bio.get(), cert) != 1) fail("PEM_write_bio_X509");
    return bio_text(bio.get());
}

key_ptr generate_key(key_kind kind) {
    key_ptr key(kind == key_kind::rsa_2048 ? EVP_RSA_gen(2048) : EVP_EC_gen("P-256"));
    if (!key) fail("key generation");
    return key;
}

// Adds extension `nid` with the value in openssl.cnf syntax (e.g. "critical,CA:TRUE").
void add_extension(X509* cert, X509V3_CTX* ctx, int nid, const std::string& value) {
    const extension_ptr ext(X509V3_EXT_conf_nid(nullptr, ctx, nid, value.c_str()));
    if (!ext) fail("extension " + std::string(OBJ_nid2sn(nid)) + " = " + value);
    if (X509_add_ext(cert, ext.get(), -1) != 1) fail("X509_add_ext");
}

// A version 3 certificate for `key` named CN=`common_name`, with a random serial, valid
// from now - 1 h for `valid_days` days (see test_ca::issue for valid_days <= 0).
x509_ptr new_certificate(EVP_PKEY* key, const std::string& common_name, int valid_days) {
    x509_ptr cert(X509_new());
    if (!cert) fail("X509_new");
    if (X509_set_version(cert.get(), X509_VERSION_3) != 1) fail("X509_set_version");

    // 127 random bits with the top one set: positive, never zero, 16 octets in DER.
    const bn_ptr serial(BN_new());
    if (!serial || BN_rand(serial.get(), 127, BN_RAND_TOP_ONE, BN_RAND_BOTTOM_ANY) != 1 ||
        BN_to_ASN1_INTEGER(serial.get(), X509_get_serialNumber(cert.get())) == nullptr) {
        fail("serial number");
    }

    constexpr long hour = 60 * 60;
    constexpr long day = 24 * hour;
    const long not_after = valid_days * day - hour;
    const long not_before = valid_days > 0 ? -hour : not_after - day;
    if (X509_gmtime_adj(X509_getm_notBefore(cert.get()), not_before) == nullptr ||
        X509_gmtime_adj(X509_getm_notAfter(cert.get()), not_after) == nullptr) {
        fail("validity");
    }

    X509_NAME* name = X509_get_subject_name(cert.get());
    if (X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8,
                                   reinterpret_cast<const unsigned char*>(common_name.c_str()), -1,
                                   -1, 0) != 1) {
        fail("subject CN = " + common_name);
    }
    if (X509_set_pubkey(cert.get(), key) != 1) fail("X509_set_pubkey");
    return cert;
}

}  // namespace

test_ca::test_ca(std::string common_name) {
    const key_ptr key = generate_key(key_kind::ec_p256);
    const x509_ptr cert = new_certificate(key.get(), common_name, 3650);
    if (X509_set_issuer_name(cert.get(), X509_get_subject_name(cert.get())) != 1) {
        fail("X509_set_issuer_name");
    }
    X509V3_CTX ctx;
    X509V3_set_ctx(&ctx, cert.get(), cert.get(), nullptr, nullptr, 0);
    add_extension(cert.get(), &ctx, NID_basic_constraints, "critical,CA:TRUE");
    add_extension(cert.get(), &ctx, NID_key_usage, "critical,keyCertSign,cRLSign");
    add_extension(cert.get(), &ctx, NID_subject_key_identifier, "hash");
    add_extension(cert.get(), &ctx, NID_authority_key_identifier, "keyid:always");
    if (X509_sign(cert.get(), key.get(), EVP_sha256()) == 0) fail("signing the CA certificate");
    cert_pem_ = cert_to_pem(cert.get());
    key_pem_ = key_to_pem(key.get());
}

pem_pair test_ca::issue(const std::vector<std::string>& dns_names,
                        const std::vector<std::string>& ips, key_kind kind, bool client,
                        int valid_days) const {
    const x509_ptr ca_cert = read_cert(cert_pem_);
    const key_ptr ca_key = read_key(key_pem_);
    const key_ptr key = generate_key(kind);
    const x509_ptr cert =
        new_certificate(key.get(), dns_names.empty() ? "client" : dns_names.front(), valid_days);
    if (X509_set_issuer_name(cert.get(), X509_get_subject_name(ca_cert.get())) != 1) {
        fail("X509_set_issuer_name");
    }

    X509V3_CTX ctx;
    X509V3_set_ctx(&ctx, ca_cert.get(), cert.get(), nullptr, nullptr, 0);
    add_extension(cert.get(), &ctx, NID_basic_constraints, "critical,CA:FALSE");
    // keyEncipherment: TLS 1.2's RSA key exchange encrypts the premaster secret to the key.
    add_extension(cert.get(), &ctx, NID_key_usage,
                  kind == key_kind::rsa_2048 ? "critical,digitalSignature,keyEncipherment"
                                             : "critical,digitalSignature");
    add_extension(cert.get(), &ctx, NID_ext_key_usage, client ? "clientAuth" : "serverAuth");
    std::string names;
    for (const std::string& dns : dns_names) names += (names.empty() ? "DNS:" : ",DNS:") + dns;
    for (const std::string& ip : ips) names += (names.empty() ? "IP:" : ",IP:") + ip;
    if (!names.empty()) add_extension(cert.get(), &ctx, NID_subject_alt_name, names);
    add_extension(cert.get(), &ctx, NID_subject_key_identifier, "hash");
    add_extension(cert.get(), &ctx, NID_authority_key_identifier, "keyid:always");
    if (X509_sign(cert.get(), ca_key.get(), EVP_sha256()) == 0) fail("signing the certificate");
    return pem_pair{cert_to_pem(cert.get()), key_to_pem(key.get())};
}

std::string encrypt_key_pem(const std::string& key_pem, const std::string& password) {
    if (password.empty()) {
        throw std::runtime_error("test_certs: encrypt_key_pem needs a non-empty password");
    }
    const key_ptr key = read_key(key_pem);
    const bio_ptr bio = empty_bio();
    if (PEM_write_bio_PrivateKey(bio.get(), key.get(), EVP_aes_256_cbc(),
                                 reinterpret_cast<const unsigned char*>(password.data()),
                                 static_cast<int>(password.size()), nullptr, nullptr) != 1) {
        fail("PEM_write_bio_PrivateKey with AES-256-CBC");
    }
    return bio_text(bio.get());
}

void write_file(const std::string& path, const std::string& text) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
    out.close();
    if (!out) throw std::runtime_error("test_certs: cannot write " + path);
}

std::string serial_hex(const std::string& cert_pem) {
    const x509_ptr cert = read_cert(cert_pem);
    const bn_ptr serial(ASN1_INTEGER_to_BN(X509_get0_serialNumber(cert.get()), nullptr));
    if (!serial) fail("ASN1_INTEGER_to_BN");
    char* hex = BN_bn2hex(serial.get());
    if (hex == nullptr) fail("BN_bn2hex");
    std::string out(hex);
    OPENSSL_free(hex);
    return out;
}

}  // namespace tern_test

// libFuzzer harness for what tern does with a client's TLS bytes (src/tls/): the input is
// handed to a server-side SSL object built from tern's own tls_context (the profile, two
// certificates with SNI names, the ALPN and SNI callbacks) as if it came off the socket,
// and the handshake is driven as far as it goes. Also the transport-free pieces on the raw
// input: choose_alpn (whose answer must be "http/1.1" or "h2" inside the input, or nothing) and
// server_name_matches. OpenSSL parses the records; this checks tern's callbacks and
// settings on whatever it hands them, under ASan and UBSan.

#include "tls/context.hpp"

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace {

void check(bool ok) {
    if (!ok) __builtin_trap();
}

// A self-signed certificate for `name`, as PEM, made with OpenSSL at start-up.
tern::tls_certificate self_signed(const char* name) {
    EVP_PKEY* key = EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", "P-256");
    X509* cert = X509_new();
    ASN1_INTEGER_set(X509_get_serialNumber(cert), 1);
    X509_gmtime_adj(X509_getm_notBefore(cert), 0);
    X509_gmtime_adj(X509_getm_notAfter(cert), 86400);
    X509_set_pubkey(cert, key);
    X509_NAME* subject = X509_get_subject_name(cert);
    X509_NAME_add_entry_by_txt(subject, "CN", MBSTRING_ASC,
                               reinterpret_cast<const unsigned char*>(name), -1, -1, 0);
    X509_set_issuer_name(cert, subject);
    X509_sign(cert, key, EVP_sha256());
    const auto pem = [](auto write) {
        BIO* bio = BIO_new(BIO_s_mem());
        write(bio);
        char* data = nullptr;
        const long n = BIO_get_mem_data(bio, &data);
        std::string text(data, static_cast<std::size_t>(n));
        BIO_free(bio);
        return text;
    };
    tern::tls_certificate c;
    c.cert_pem = pem([&](BIO* b) { PEM_write_bio_X509(b, cert); });
    c.key_pem = pem(
        [&](BIO* b) { PEM_write_bio_PrivateKey(b, key, nullptr, nullptr, 0, nullptr, nullptr); });
    c.server_names = {name};
    X509_free(cert);
    EVP_PKEY_free(key);
    return c;
}

const tern::detail::tls_context& context() {
    static const auto built = [] {
        tern::tls_config settings;
        settings.certificates.push_back(self_signed("localhost"));
        settings.certificates.push_back(self_signed("*.wild.test"));
        // h2 always servable: ALPN picks it whenever the input offers it.
        return tern::detail::tls_context::build(settings, []() noexcept { return true; });
    }();
    return *built;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view input(reinterpret_cast<const char*>(data), size);

    for (const bool offer_h2 : {false, true}) {
        const std::string_view chosen = tern::detail::choose_alpn(input, offer_h2);
        check(chosen.empty() || ((chosen == "http/1.1" || (offer_h2 && chosen == "h2")) &&
                                 chosen.data() >= input.data() &&
                                 chosen.data() + chosen.size() <= input.data() + input.size()));
    }
    const std::string_view half = input.substr(0, size / 2);
    const std::string_view name = input.substr(size / 2);
    if (tern::detail::server_name_matches("*.wild.test", name)) {
        check(name.size() > 10 &&
              name.substr(0, name.size() - 10).find('.') == std::string_view::npos);
    }
    (void)tern::detail::server_name_matches(half, name);

    // The bytes as a client's: a server-side SSL object over memory BIOs, driven until it waits
    // for more than the input holds.
    SSL* ssl = SSL_new(context().initial());
    BIO* in = BIO_new(BIO_s_mem());
    BIO* out = BIO_new(BIO_s_mem());
    BIO_write(in, data, static_cast<int>(size));
    BIO_set_mem_eof_return(in, -1);  // no more bytes: "retry", as a socket would say
    SSL_set_bio(ssl, in, out);
    SSL_set_accept_state(ssl);
    for (int step = 0; step < 8; ++step) {
        const int rc = SSL_do_handshake(ssl);
        if (rc == 1) {
            char buf[512];
            (void)SSL_read(ssl, buf, sizeof buf);
            break;
        }
        if (SSL_get_error(ssl, rc) != SSL_ERROR_WANT_READ || BIO_ctrl_pending(in) == 0) break;
        (void)BIO_reset(out);
    }
    SSL_free(ssl);
    ERR_clear_error();
    return 0;
}

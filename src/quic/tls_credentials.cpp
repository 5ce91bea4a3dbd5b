// The certificate and key of the QUIC server: see tls_credentials.hpp.

#include "quic/tls_credentials.hpp"

#include <gnutls/gnutls.h>

#include <stdexcept>

// Last: GnuTLS's and ngtcp2's functions through the table that loads them on first use.
#include "quic/calls.hpp"

namespace tern::detail::quic {

tls_credentials::tls_credentials(const std::string& cert_file, const std::string& key_file) {
    if (gnutls_certificate_allocate_credentials(&cred_) != 0) {
        throw std::runtime_error("tern: http3: no GnuTLS credentials");
    }
    const int rv = gnutls_certificate_set_x509_key_file(cred_, cert_file.c_str(), key_file.c_str(),
                                                        GNUTLS_X509_FMT_PEM);
    if (rv != 0) {
        gnutls_certificate_free_credentials(cred_);
        throw std::invalid_argument("tern: http3: cannot load " + cert_file + " and " + key_file +
                                    ": " + gnutls_strerror(rv));
    }
}

tls_credentials::~tls_credentials() { gnutls_certificate_free_credentials(cred_); }

}  // namespace tern::detail::quic

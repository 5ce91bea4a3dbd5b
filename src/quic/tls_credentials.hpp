#pragma once
// The certificate and key a QUIC server shows (docs/http3.md): the same PEM files as the
// HTTPS listener, read by GnuTLS (the only GnuTLS user with src/quic/connection.cpp).

#include <string>

struct gnutls_certificate_credentials_st;

namespace tern::detail::quic {

class tls_credentials {
public:
    /// Reads `cert_file` (PEM chain) and `key_file` (PEM key). Throws std::invalid_argument
    /// naming the files when GnuTLS cannot load them.
    tls_credentials(const std::string& cert_file, const std::string& key_file);
    ~tls_credentials();
    tls_credentials(const tls_credentials&) = delete;
    tls_credentials& operator=(const tls_credentials&) = delete;

    gnutls_certificate_credentials_st* get() const noexcept { return cred_; }

private:
    gnutls_certificate_credentials_st* cred_ = nullptr;
};

}  // namespace tern::detail::quic

#pragma once
/// @file test_certs.hpp
/// Certificates made in memory for TLS wire tests: a throwaway CA and the leaves it signs,
/// built with OpenSSL's own key generation and X.509 code (no hand-written crypto, no files
/// checked into the repository). OpenSSL stays out of this header.

#include <string>
#include <vector>

namespace tern_test {

/// A certificate and its private key, both PEM text.
struct pem_pair {
    std::string cert_pem;  ///< "-----BEGIN CERTIFICATE-----" ...
    std::string key_pem;   ///< The key in the clear, PKCS#8 ("-----BEGIN PRIVATE KEY-----").
};

/// The key type of an issued certificate.
enum class key_kind {
    ec_p256,   ///< ECDSA on NIST P-256.
    rsa_2048,  ///< RSA, 2048 bits.
};

/// A fresh self-signed certificate authority. Every test_ca has its own key, so a leaf
/// of one CA does not verify against another. Copyable (it holds only PEM text).
class test_ca {
public:
    /// A new CA (EC P-256, SHA-256) named `common_name`: basicConstraints CA:TRUE and
    /// keyUsage keyCertSign, cRLSign (both critical), valid from an hour ago for ten years.
    /// Throws std::runtime_error with OpenSSL's error string on failure.
    explicit test_ca(std::string common_name = "tern test CA");

    /// The CA's certificate as PEM (what a client trusts).
    const std::string& cert_pem() const noexcept { return cert_pem_; }
    /// The CA's private key as PEM (in the clear).
    const std::string& key_pem() const noexcept { return key_pem_; }

    /// A leaf signed by this CA (SHA-256) with a fresh key of `kind`: subjectAltName
    /// DNS:<each of dns_names> and IP:<each of ips> (none when both are empty),
    /// extendedKeyUsage serverAuth (clientAuth when `client`), basicConstraints CA:FALSE, a
    /// random 127-bit serial, and CN = the first DNS name (or "client" when there is none).
    /// Valid from an hour ago for `valid_days` days; `valid_days` <= 0 gives a certificate
    /// that has already expired (notAfter an hour ago or earlier, notBefore a day before
    /// that). Throws std::runtime_error on failure (e.g. an IP that does not parse).
    pem_pair issue(const std::vector<std::string>& dns_names,
                   const std::vector<std::string>& ips = {"127.0.0.1"},
                   key_kind kind = key_kind::ec_p256, bool client = false,
                   int valid_days = 30) const;

private:
    std::string cert_pem_;
    std::string key_pem_;
};

/// `key_pem` (any private key PEM in the clear) encrypted with AES-256-CBC under `password`,
/// as PKCS#8 ("-----BEGIN ENCRYPTED PRIVATE KEY-----"). Throws std::runtime_error when the
/// key does not parse or `password` is empty.
std::string encrypt_key_pem(const std::string& key_pem, const std::string& password);

/// Writes `text` to `path`, replacing the file; throws std::runtime_error on failure.
void write_file(const std::string& path, const std::string& text);

/// The serial number of the (first) certificate in `cert_pem`, as upper-case hex without
/// leading zeros (OpenSSL's BN_bn2hex), e.g. "4A0F3C..."; for checking which certificate a
/// server sent. Throws std::runtime_error when `cert_pem` holds no certificate.
std::string serial_hex(const std::string& cert_pem);

}  // namespace tern_test

#pragma once
/// @file tls.hpp
/// HTTPS settings: certificates, the protocol profile, and the handshake limits
/// (docs/tls.md). Plain types only; OpenSSL stays private to libtern.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tern {

/// One certificate chain and its private key, from PEM files or from PEM text in memory.
/// Every field has a default, so designated initializers may name only some.
struct tls_certificate {
    /// PEM file with the certificate chain, the server's own certificate first.
    std::string cert_file{};
    /// PEM file with the private key of that certificate.
    std::string key_file{};
    /// The chain as PEM text, instead of `cert_file`.
    std::string cert_pem{};
    /// The key as PEM text, instead of `key_file`.
    std::string key_pem{};
    /// The password of an encrypted key; empty for a key in the clear.
    std::string password{};
    /// The server names (SNI) this certificate answers, e.g. "example.com" or
    /// "*.example.com" (one label). Empty: the names in the certificate itself (its DNS
    /// subject alternative names). A client whose name no certificate claims, or that sends
    /// none, gets the first certificate.
    std::vector<std::string> server_names{};
    /// A DER OCSP response for this certificate (e.g. from `openssl ocsp -respout`), stapled
    /// to handshakes whose client asks for one; re-read by `app.reload_tls()`. Empty: none.
    std::string ocsp_response_file{};
};

/// Which protocol versions and ciphers the server offers.
enum class tls_profile {
    /// TLS 1.2 and 1.3, Mozilla's "intermediate" cipher list for 1.2 (forward-secret AEAD
    /// suites only). The default: every client of the last ten years connects.
    intermediate,
    /// TLS 1.3 only (Mozilla's "modern").
    modern,
};

/// Whether clients present certificates of their own (mutual TLS).
enum class client_certificates {
    none,      ///< not asked for (the default)
    optional,  ///< asked for; a client may send none, one it sends must verify
    required,  ///< a client without a certificate that verifies is refused
};

/// What the plain-HTTP listener beside HTTPS does (`tls_config::http_port`).
enum class plain_http {
    redirect,  ///< every request: 301 (GET, HEAD) or 308 to the same host and target over HTTPS
    serve,     ///< serves the app as over HTTPS (`ctx.scheme()` tells them apart)
};

/// HTTPS on the app's listener: `app.tls(...)`, then `listen`/`start` as usual.
struct tls_config {
    /// At least one. The first is the default for clients that send no known server name.
    std::vector<tls_certificate> certificates{};
    /// Protocol versions and ciphers.
    tls_profile profile = tls_profile::intermediate;
    /// Handshakes in progress per worker thread, counted from a hello's first bytes; a
    /// connection whose hello begins over it is closed at once (counted as refused), so a
    /// flood of handshakes cannot take the loop from the connections already established.
    /// A connection that sends nothing takes no slot (timeouts.first_byte closes it).
    std::size_t max_handshakes = 64;
    /// Client certificates (mutual TLS). The verified subject is `ctx.client_certificate()`.
    tern::client_certificates client_certificates = tern::client_certificates::none;
    /// PEM file of the CA certificates that client certificates must chain to (needed
    /// unless client_certificates is none); their names are sent as acceptable issuers.
    std::string client_ca_file{};
    /// A plain-HTTP listener beside the HTTPS one, on the same host: unset for none, 0 for
    /// any free port (`app.http_port()` tells which), e.g. 80 beside 443.
    std::optional<std::uint16_t> http_port{};
    /// What the plain listener does.
    tern::plain_http http = tern::plain_http::redirect;
};

}  // namespace tern

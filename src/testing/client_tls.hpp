#pragma once
// The TLS settings every HTTPS client of the kit shares: TLS 1.2 and 1.3, the peer's
// certificate verified against the kit's certificate alone, the name "localhost" checked.

#include <openssl/ssl.h>

#include <string>

namespace tern::testing::detail {

/// The name the kit's clients send as SNI and check in the server's certificate.
inline constexpr const char* tls_server_name = "localhost";

/// The shared client context (made on first use; thread-safe). Throws client_error when
/// OpenSSL cannot make it.
SSL_CTX* client_tls_context();

/// OpenSSL's queued errors as text ("; "-separated), emptying the queue; `fallback` when
/// none is queued.
std::string openssl_errors(const std::string& fallback);

}  // namespace tern::testing::detail

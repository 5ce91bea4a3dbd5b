#pragma once
/// @file client_context.hpp
/// The OpenSSL context of tern::client's HTTPS connections: TLS 1.2 and up, ALPN http/1.1,
/// and, unless turned off, verification of the server's chain against the system's CAs (or a
/// given PEM file) and of its name (docs/client.md). Built once per client, read-only after.

#include <memory>
#include <string>

using SSL_CTX = struct ssl_ctx_st;

namespace tern::detail {

class tls_client_context {
public:
    /// Throws std::invalid_argument naming OpenSSL's reason when `ca_file` cannot be loaded.
    static std::shared_ptr<const tls_client_context> build(bool verify_peer,
                                                           const std::string& ca_file);
    ~tls_client_context();
    tls_client_context(const tls_client_context&) = delete;
    tls_client_context& operator=(const tls_client_context&) = delete;

    SSL_CTX* get() const noexcept { return ctx_; }
    bool verifies() const noexcept { return verify_; }

private:
    tls_client_context() = default;
    SSL_CTX* ctx_ = nullptr;
    bool verify_ = true;
};

}  // namespace tern::detail

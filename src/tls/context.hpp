#pragma once
/// @file context.hpp
/// The server's TLS settings made into OpenSSL contexts: one per certificate, the
/// protocol profile applied to each, the SNI table that picks one per connection, and ALPN.
/// Built once per start or reload, read-only after; connections share it (docs/tls.md).

#include "http/byte_transport.hpp"
#include "tls/ticket_keys.hpp"

#include <tern/tls.hpp>

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

using SSL_CTX = struct ssl_ctx_st;
using SSL = struct ssl_st;

namespace tern::detail {

/// Immutable after build(); its SSL_CTXs live as long as the last connection using them
/// (OpenSSL counts the references).
class tls_context {
public:
    /// Loads every certificate and key and applies the profile. Throws std::invalid_argument
    /// naming the certificate (its index and file) and OpenSSL's reason when one cannot be
    /// loaded, has no matching key, or the settings are out of range.
    /// `h2_ready`: ALPN picks `h2` when a client offers it and this says HTTP/2 can be
    /// served (its library loads), `http/1.1` otherwise; null: never `h2` (HTTP/2 is off).
    static std::shared_ptr<const tls_context> build(const tern::tls_config& settings,
                                                    h2_ready_check h2_ready);

    ~tls_context();
    tls_context(const tls_context&) = delete;
    tls_context& operator=(const tls_context&) = delete;

    /// The context a new connection starts with: the first certificate's. The SNI callback
    /// moves the connection to another certificate's context during the handshake.
    SSL_CTX* initial() const noexcept { return entries_.front().ctx; }
    /// Handshakes in progress allowed per worker.
    std::size_t max_handshakes() const noexcept { return max_handshakes_; }

    /// The context whose certificate answers `server_name` (case-insensitive; exact names
    /// before one-label wildcards), or null when none claims it.
    SSL_CTX* for_server_name(std::string_view server_name) const noexcept;

private:
    struct entry {
        SSL_CTX* ctx = nullptr;
        std::vector<std::string> names;  // lower case; "*.example.com" for a wildcard
        std::string ocsp_response;       // DER, stapled when a client asks; empty: none
    };
    friend int staple_ocsp(SSL* ssl, void* arg);
    tls_context() = default;

    std::vector<entry> entries_;
    std::unique_ptr<ticket_keys> tickets_;  // the session-ticket keys (tls/ticket_keys.hpp)
    std::size_t max_handshakes_ = 0;
};

/// The ALPN protocol tern picks from a client's wire-format list (RFC 7301 3.1): `h2` when
/// `offer_h2` and the client offers it, else `http/1.1`; empty when the list holds none tern
/// speaks. Transport-free, for tests.
std::string_view choose_alpn(std::string_view client_list, bool offer_h2) noexcept;

/// Whether `pattern` (lower case; an exact name or "*.rest") claims `name`
/// (case-insensitive). A wildcard stands for exactly one non-empty label.
bool server_name_matches(std::string_view pattern, std::string_view name) noexcept;

}  // namespace tern::detail

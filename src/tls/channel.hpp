#pragma once
/// @file channel.hpp
/// One connection's TLS: an OpenSSL object over the connection's non-blocking socket.
/// Each call does what the socket allows now and says what to wait for when it cannot go
/// on (readable or writable); the connection does the waiting (docs/tls.md). No asio here.

#include "platform/socket_api.hpp"
#include "tls/client_context.hpp"
#include "tls/context.hpp"

#include <cstddef>
#include <memory>
#include <string_view>

using SSL = struct ssl_st;

namespace tern::detail {

class tls_channel {
public:
    /// What a call did.
    enum class status {
        done,        ///< `n` bytes read or written, or the handshake is complete
        want_read,   ///< call again once the socket is readable
        want_write,  ///< call again once the socket is writable
        closed,      ///< the peer ended the connection (close_notify, FIN, reset)
        failed,      ///< a protocol error: failure() says which
    };
    /// A call's outcome.
    struct result {
        status what = status::done;
        std::size_t n = 0;
    };

    /// A server-side channel on socket `fd` (not owned), using `context`'s certificates.
    /// Throws std::bad_alloc when OpenSSL cannot allocate.
    tls_channel(std::shared_ptr<const tls_context> context, platform::native_socket fd);
    /// A client-side channel on socket `fd` (not owned) to `host`: sent as SNI when it is a
    /// name, and checked against the certificate (a name, or an IP address) when the context
    /// verifies. Throws std::bad_alloc when OpenSSL cannot allocate.
    tls_channel(std::shared_ptr<const tls_client_context> context, platform::native_socket fd,
                const std::string& host);
    ~tls_channel();
    tls_channel(const tls_channel&) = delete;
    tls_channel& operator=(const tls_channel&) = delete;

    /// Goes on with the handshake.
    result handshake() noexcept;
    /// Reads decrypted bytes into `into` (at most `n`).
    result read(char* into, std::size_t n) noexcept;
    /// Encrypts and sends from `from` (at most `n`). After want_read/want_write, call
    /// again with the same bytes (they may have moved).
    result write(const char* from, std::size_t n) noexcept;
    /// True when bytes already inside OpenSSL can be read without waiting for the socket.
    bool has_pending() const noexcept;
    /// Sends close_notify once, as far as the socket takes it now; never waits.
    void shutdown() noexcept;

    /// True once the handshake is complete.
    bool established() const noexcept { return established_; }
    /// OpenSSL's reason for the last `failed`, e.g. "unsupported protocol" (static text).
    const char* failure() const noexcept { return failure_; }
    /// True when the handshake failed because the client spoke plain HTTP.
    bool plain_http() const noexcept { return plain_http_; }
    /// Why the server's certificate did not verify (a client's failed handshake), e.g.
    /// "certificate has expired"; null when it did or was not checked (static text).
    const char* verify_failure() const noexcept;
    /// The protocol version, e.g. "TLSv1.3" (static text).
    const char* version() const noexcept;
    /// The ALPN protocol chosen, empty when the client offered none.
    std::string_view alpn() const noexcept;
    /// The server name the client asked for (SNI), empty when none.
    std::string_view server_name() const noexcept;
    /// The subject of the client's certificate (RFC 2253, e.g. "CN=alice,O=Example") when
    /// it sent one and it verified; empty otherwise.
    std::string client_subject() const;

private:
    result outcome(int rc) noexcept;

    std::shared_ptr<const tls_context> context_;  // its callbacks run during the handshake
    std::shared_ptr<const tls_client_context> client_context_;  // a client's (tern::client)
    SSL* ssl_ = nullptr;
    const char* failure_ = nullptr;
    bool established_ = false;
    bool shut_ = false;
    bool plain_http_ = false;
};

}  // namespace tern::detail

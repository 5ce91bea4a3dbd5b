#pragma once
// The client's keep-alive HTTP/1.1 connection (RFC 9112), plain or TLS: one request at a
// time, a connection the server closed meanwhile replaced, and a request it dropped
// unanswered on a reused connection sent once more on a new one, as browsers do.

#include "testing/outgoing.hpp"
#include "testing/stream.hpp"

#include <cstdint>
#include <optional>
#include <string>

namespace tern::testing::detail {

/// A keep-alive HTTP/1.1 connection to 127.0.0.1:port, opened on first use.
class http1_connection {
public:
    /// For the server at `port`, over TLS when `tls`.
    http1_connection(std::uint16_t port, bool tls) : port_(port), tls_(tls) {}

    /// Sends `request` (with Host and Content-Length added) and reads its whole response.
    /// Throws client_error or timeout_error (past `deadline`) with the bare reason; the
    /// connection is dropped then.
    response exchange(const outgoing_request& request, clock::time_point deadline);
    /// Closes the connection (the next exchange opens a new one).
    void disconnect() noexcept;

private:
    std::string serialize(const outgoing_request& request) const;

    std::uint16_t port_;
    bool tls_;
    std::optional<stream> connection_;
    std::string buffer_;  // received bytes not yet consumed
};

}  // namespace tern::testing::detail

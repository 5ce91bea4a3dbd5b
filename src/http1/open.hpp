#pragma once
// The protocol of a new connection, chosen once its transport is open: HTTP/2 when TLS's
// ALPN agreed on h2, HTTP/1 otherwise (which may hand the connection on: the h2c preface, a
// WebSocket's 101). The app gives this to the server (src/net knows no protocol).

#include "http/byte_transport.hpp"

#include <memory>

namespace tern::detail {

/// A protocol_opener (http/byte_transport.hpp).
std::shared_ptr<transport_user> open_protocol(std::shared_ptr<byte_transport> io,
                                              protocol_host& host, const opening& how);

/// An h2_ready_check (http/byte_transport.hpp): always true, since HTTP/2 is tern's own
/// codec and loads no library.
bool h2_ready() noexcept;

}  // namespace tern::detail

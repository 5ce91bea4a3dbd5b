#pragma once
// HTTP/3 on a worker's datagram socket (docs/http3.md): the QUIC core (src/quic) fed with
// what the socket reads, its datagrams sent and its timer kept, and an h3_connection made
// for each connection whose handshake completes.

#include "http/datagram_port.hpp"

#include <memory>

namespace tern::detail {

class protocol_host;

/// A datagram_opener (http/datagram_port.hpp): HTTP/3 with the certificate and key of the
/// host's tls settings. Throws std::invalid_argument when they cannot be loaded.
std::unique_ptr<datagram_receiver> open_datagrams(datagram_sender& out, protocol_host& host);

}  // namespace tern::detail

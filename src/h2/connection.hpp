#pragma once
// One HTTP/2 connection's protocol (RFC 9113), on tern's own frame layer (h2/frames.hpp),
// stream state machine (h2/stream_states.hpp) and HPACK (h2/hpack.hpp): streams, flow
// control, limits, deadlines and the mapping onto tern's request handler are here. Transport-free:
// the connection hands it what it reads and pulls what it sends, exactly as for a WebSocket (an
// upgraded_protocol, carried by src/http1/upgraded.cpp), so the transport's reads, writes, TLS and
// deadline serve HTTP/2 unchanged (docs/architecture.md, "The byte transport and the protocols over
// it"; docs/http2.md).

#include "http/exchange_port.hpp"
#include "http/protocol_host.hpp"
#include "http/request_handler.hpp"

#include <tern/config.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

namespace tern::detail {

/// The peer of one connection, as requests see it.
struct h2_peer {
    std::string remote_ip;
    bool secure = false;         ///< over TLS (h2), else h2c
    std::string client_subject;  ///< a verified client certificate's subject (mutual TLS)
};

/// The server side of one HTTP/2 connection, which sends its SETTINGS first. Bytes
/// read go to `receive` (the client preface first); bytes to send are pulled. Loop thread
/// only, except the posted resumes of deferred streams. Never null.
std::shared_ptr<upgraded_protocol> make_h2_connection(protocol_host& host, h2_peer peer);

/// The first bytes of an HTTP/2 connection with prior knowledge (RFC 9113 3.4).
inline constexpr std::string_view h2_preface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

}  // namespace tern::detail

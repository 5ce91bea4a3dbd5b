#pragma once
// A connection after it left HTTP/1: the transport carries an upgraded_protocol (a WebSocket
// connection after its 101, an HTTP/2 connection after ALPN's h2 or the h2c preface). Every read
// goes to the protocol's `receive`, and what it sends is pulled like an unframed streamed
// body whenever the previous write is done; reading goes on while it writes, so a peer's
// close or ping is seen whatever the other direction does. When the protocol ends, the
// connection closes after a linger (docs/architecture.md, "The byte transport and the
// protocols over it").

#include "http/byte_transport.hpp"
#include "http/exchange_port.hpp"
#include "http/protocol_host.hpp"

#include <memory>
#include <string_view>

namespace tern::detail {

class upgraded_connection final : public std::enable_shared_from_this<upgraded_connection>,
                                  public transport_user,
                                  private exchange_port {
public:
    /// `already_read`: bytes the client sent right behind the handshake (or the preface
    /// itself), which belong to the protocol; valid until `start` returns.
    upgraded_connection(std::shared_ptr<byte_transport> io, protocol_host& host,
                        std::shared_ptr<upgraded_protocol> protocol, std::string_view already_read);

    // transport_user
    void start() override;
    void on_read(std::error_code ec, std::size_t n) override;
    void on_written(std::error_code ec) override;
    void on_deadline(deadline_kind kind) override;
    void stop_when_idle() override;
    void begin_closing() override;
    void on_close() noexcept override;

private:
    // streaming: the protocol had nothing to send at the last pull; wake() or the idle
    // deadline goes on. lingering: it ended; the transport discards what the peer still sends.
    enum class phase { writing, streaming, lingering, closed };

    // exchange_port: the protocol wakes the connection when it has bytes after a pull found
    // none. Nothing is held or finished here (its streams have their own ports).
    std::shared_ptr<loop_door> door() override { return host_.door(); }
    void hold(std::shared_ptr<held_link>) override {}
    void finish(response&&) override {}
    void wake() override;

    void pull();
    void write();
    void end() noexcept;
    void linger();

    std::shared_ptr<byte_transport> io_;
    protocol_host& host_;
    std::shared_ptr<upgraded_protocol> protocol_;  // null once it ended
    std::string_view already_read_;
    phase phase_ = phase::writing;
};

}  // namespace tern::detail

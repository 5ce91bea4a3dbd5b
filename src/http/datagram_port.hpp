#pragma once
// The seam between a datagram transport (src/net's UDP socket) and the protocol over it
// (HTTP/3 over QUIC, src/h3; docs/http3.md), as byte_transport is for the protocols over a
// byte stream: the socket tells the receiver what it reads and when its timer is due; the
// receiver sends through the sender. Interfaces only. Loop thread only.

#include "platform/datagrams.hpp"

#include "platform/socket_api.hpp"

#include <chrono>
#include <cstdint>
#include <memory>
#include <span>

namespace tern::detail {

class protocol_host;

/// One datagram to send: its bytes and where to (the platform seam's, so that a batch goes
/// to the system call as it is).
using datagram_view = platform::outgoing_datagram;

/// Implemented by the datagram transport.
class datagram_sender {
public:
    /// Sends one datagram to `to`; one the kernel has no room for is dropped (QUIC
    /// retransmits). False when it was not sent.
    virtual bool send(std::span<const std::uint8_t> bytes, const sockaddr* to,
                      socklen_t to_length) = 0;
    /// Sends them all, in order, in as few system calls as the transport can (sendmmsg);
    /// those the kernel has no room for are dropped.
    virtual void send_many(std::span<const datagram_view> datagrams) {
        for (const auto& d : datagrams) send(d.bytes, d.to, d.to_length);
    }
    /// `datagram_receiver::on_expiry` at `when` (replacing the time given before).
    virtual void expire_at(std::chrono::steady_clock::time_point when) = 0;

    /// This socket's place among the sockets of one port, a worker's each (SO_REUSEPORT: the
    /// kernel spreads peers over them by address), and how many there are (at most 256).
    virtual unsigned index() const noexcept { return 0; }
    virtual unsigned count() const noexcept { return 1; }
    /// Hands a copy of one datagram to the receiver of socket `to` (< count()), on that
    /// socket's loop, as if it had read it: for a peer whose address changed, so that the
    /// kernel now brings its datagrams here, while its connection lives there.
    virtual void forward(unsigned /*to*/, std::span<const std::uint8_t> /*bytes*/,
                         const sockaddr* /*remote*/, socklen_t /*remote_length*/) {}
    /// What the protocols over the sockets of one port share: empty until the first of them
    /// is opened, which fills it (they are opened one after another, before any runs).
    virtual std::shared_ptr<void>& shared() = 0;

protected:
    ~datagram_sender() = default;
};

/// Implemented by the protocol: told what the transport reads and of its timer.
class datagram_receiver {
public:
    virtual ~datagram_receiver() = default;
    /// One datagram from `remote` (to the socket's `local` address).
    virtual void on_datagram(std::span<const std::uint8_t> bytes, const sockaddr* local,
                             socklen_t local_length, const sockaddr* remote,
                             socklen_t remote_length) = 0;
    /// The time given to `datagram_sender::expire_at` has come.
    virtual void on_expiry() = 0;
    /// A stop has begun (its grace period, or the stop itself): the protocol tells its
    /// peers (HTTP/3's GOAWAY) and takes no new requests.
    virtual void on_closing() noexcept {}
    /// The server stops: work not started is answered 503 and endless streams end; the
    /// answers under way go on (`busy`) until they are out or the drain's deadline passes,
    /// when the transport destroys the protocol (which closes what is left).
    virtual void on_stop() noexcept {}
    /// Some answer is still under way (the transport polls it while it drains).
    virtual bool busy() const noexcept { return false; }
};

/// Makes the protocol over a worker's datagram socket (the app gives the server src/h3's
/// `open_datagrams`); null when it cannot be made.
using datagram_opener = std::unique_ptr<datagram_receiver> (*)(datagram_sender& out,
                                                               protocol_host& host);

}  // namespace tern::detail

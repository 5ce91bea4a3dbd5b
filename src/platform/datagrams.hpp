#pragma once
// The UDP calls that differ between the I/O paths (TERN_IO, docs/platforms.md), for QUIC's
// socket (src/net/datagram_socket.*): a non-blocking socket, and datagrams read and sent
// without waiting. Linux: a batch per call (recvmmsg, sendmmsg; datagrams_linux.cpp).
// Portable: one datagram per call (recvfrom, sendto; datagrams_portable.cpp). The lowest
// layer: no other folder of src/.

#include "platform/socket_api.hpp"

#include <cstddef>
#include <cstdint>
#include <span>

namespace tern::detail::platform {

/// One datagram to send (http/datagram_port.hpp's datagram_view).
struct outgoing_datagram {
    std::span<const std::uint8_t> bytes;
    const sockaddr* to = nullptr;
    socket_length to_length = 0;
};

/// Room for one datagram to receive, and what arrived in it.
struct incoming_datagram {
    std::span<std::uint8_t> buffer;    ///< where its bytes go
    sockaddr_storage* from = nullptr;  ///< where its sender's address goes
    std::size_t size = 0;              ///< set: its length
    socket_length from_length = 0;     ///< set: the address's length
};

/// A UDP socket of `family` (AF_INET, AF_INET6), non-blocking and close-on-exec: -1 with
/// errno when it cannot be made.
native_socket open_datagram_socket(int family) noexcept;

/// Reads the datagrams waiting on the non-blocking `fd` into `slots`, without waiting: how
/// many arrived (0: none waits, or an error the next readiness retries); fewer than
/// `slots.size()` means none is left. Linux: one recvmmsg (at most 16). Portable: one
/// recvfrom per datagram.
std::size_t receive_datagrams(native_socket fd, std::span<incoming_datagram> slots) noexcept;

/// Sends the first of `datagrams` without waiting: how many of them are done with, at least
/// one. A datagram the kernel has no room for is dropped and counted done (QUIC
/// retransmits). Linux: up to 16 messages in one sendmmsg, and where the kernel segments
/// UDP (UDP_SEGMENT), each message carries a run of datagrams to one address, all of one
/// size but the last (no larger), cut apart by the kernel. Portable: one sendto each.
std::size_t send_datagrams(native_socket fd, std::span<const outgoing_datagram> datagrams) noexcept;

/// Sends `d` alone, without waiting (sendto): its size, or -1 with errno.
ssize_t send_datagram(native_socket fd, const outgoing_datagram& d) noexcept;

/// Turns the kernel's segmentation of runs (above) on or off for the whole process, whatever
/// the probe at the first send found: for the tests of both paths. No effect on the portable
/// path, which has none.
void segment_datagrams(bool on) noexcept;

}  // namespace tern::detail::platform

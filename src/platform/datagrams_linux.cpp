// The Linux path of platform/datagrams.hpp: a batch of datagrams per system call.
#include "platform/datagrams.hpp"

#include <netinet/udp.h>
#include <sys/uio.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <cstring>

namespace tern::detail::platform {

namespace {

constexpr std::size_t max_batch = 16;

}  // namespace

native_socket open_datagram_socket(int family) noexcept {
    return ::socket(family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
}

std::size_t receive_datagrams(native_socket fd, std::span<incoming_datagram> slots) noexcept {
    std::array<mmsghdr, max_batch> messages{};
    std::array<iovec, max_batch> vectors{};
    const std::size_t n = std::min(slots.size(), max_batch);
    for (std::size_t i = 0; i < n; ++i) {
        vectors[i] = {slots[i].buffer.data(), slots[i].buffer.size()};
        messages[i].msg_hdr.msg_iov = &vectors[i];
        messages[i].msg_hdr.msg_iovlen = 1;
        messages[i].msg_hdr.msg_name = slots[i].from;
        messages[i].msg_hdr.msg_namelen = sizeof(sockaddr_storage);
    }
    const int got =
        ::recvmmsg(fd, messages.data(), static_cast<unsigned>(n), MSG_DONTWAIT, nullptr);
    if (got <= 0) return 0;
    const auto count = static_cast<std::size_t>(got);
    for (std::size_t i = 0; i < count; ++i) {
        slots[i].size = messages[i].msg_len;
        slots[i].from_length = messages[i].msg_hdr.msg_namelen;
    }
    return count;
}

namespace {

// UDP generic segmentation offload (UDP_SEGMENT, Linux 4.18): one message carries several
// datagrams to one address, all of one size but the last (no larger), and the kernel cuts
// them apart once, late, instead of running its whole send path once per datagram. Probed at
// the first socket; off for good if the kernel refuses a segmented message (EIO: a device
// without checksum offload).
std::atomic<int> segmentation{-1};  // -1: not probed yet; 0: off; 1: on

// The kernel's limits: at most 64 segments (UDP_MAX_SEGMENTS) in one message, whose payload
// fits one IP packet's 16-bit length with its headers.
constexpr std::size_t max_segments = 64;
constexpr std::size_t max_segmented_bytes = 65'000;

bool same_address(const outgoing_datagram& a, const outgoing_datagram& b) noexcept {
    return a.to_length == b.to_length &&
           (a.to == b.to || std::memcmp(a.to, b.to, a.to_length) == 0);
}

// How many of `datagrams` (at least one) one message can carry.
std::size_t run_length(std::span<const outgoing_datagram> datagrams) noexcept {
    const std::size_t size = datagrams[0].bytes.size();
    std::size_t n = 1;
    std::size_t total = size;
    while (n < datagrams.size() && n < max_segments && size > 0) {
        const auto& next = datagrams[n];
        if (next.bytes.size() > size || !same_address(datagrams[0], next) ||
            total + next.bytes.size() > max_segmented_bytes) {
            break;
        }
        total += next.bytes.size();
        ++n;
        if (next.bytes.size() < size) break;  // a shorter one ends the run
    }
    return n;
}

std::size_t send_each(native_socket fd, std::span<const outgoing_datagram> datagrams) noexcept {
    std::array<mmsghdr, max_batch> messages;
    std::array<iovec, max_batch> vectors;
    const std::size_t n = std::min(max_batch, datagrams.size());
    for (std::size_t i = 0; i < n; ++i) {
        const auto& d = datagrams[i];
        messages[i] = mmsghdr{};
        vectors[i] = {const_cast<std::uint8_t*>(d.bytes.data()), d.bytes.size()};
        messages[i].msg_hdr.msg_iov = &vectors[i];
        messages[i].msg_hdr.msg_iovlen = 1;
        messages[i].msg_hdr.msg_name = const_cast<sockaddr*>(d.to);
        messages[i].msg_hdr.msg_namelen = d.to_length;
    }
    const int sent = ::sendmmsg(fd, messages.data(), static_cast<unsigned>(n), MSG_DONTWAIT);
    // A datagram the kernel refuses (no room: EAGAIN) is dropped, as QUIC allows; the rest
    // of the batch goes on after it.
    return sent > 0 ? static_cast<std::size_t>(sent) : 1;
}

// Runs of datagrams to one address, a message each (segmented when the run has more than
// one), up to max_batch messages in one sendmmsg.
std::size_t send_segmented(native_socket fd,
                           std::span<const outgoing_datagram> datagrams) noexcept {
    constexpr std::size_t max_vectors = 256;
    // Filled as far as they are used, not zeroed whole: zeroing the 256 vectors and the
    // messages was most of this function's work per call (5 KiB of memset for a packet or
    // two).
    std::array<mmsghdr, max_batch> messages;
    std::array<iovec, max_vectors> vectors;
    std::array<std::size_t, max_batch> carried;
    union control {
        cmsghdr header;
        std::array<char, CMSG_SPACE(sizeof(std::uint16_t))> bytes;
    };
    std::array<control, max_batch> controls;
    std::size_t count = 0;
    std::size_t used = 0;
    std::size_t offset = 0;
    while (count < max_batch && offset < datagrams.size()) {
        const std::size_t run = run_length(datagrams.subspan(offset));
        if (used + run > max_vectors) break;
        messages[count] = mmsghdr{};
        auto& h = messages[count].msg_hdr;
        for (std::size_t i = 0; i < run; ++i) {
            const auto& d = datagrams[offset + i];
            vectors[used + i] = {const_cast<std::uint8_t*>(d.bytes.data()), d.bytes.size()};
        }
        h.msg_iov = &vectors[used];
        h.msg_iovlen = run;
        h.msg_name = const_cast<sockaddr*>(datagrams[offset].to);
        h.msg_namelen = datagrams[offset].to_length;
        if (run > 1) {
            h.msg_control = controls[count].bytes.data();
            h.msg_controllen = sizeof controls[count].bytes;
            controls[count] = control{};
            cmsghdr* c = CMSG_FIRSTHDR(&h);
            c->cmsg_level = SOL_UDP;
            c->cmsg_type = UDP_SEGMENT;
            c->cmsg_len = CMSG_LEN(sizeof(std::uint16_t));
            const auto size = static_cast<std::uint16_t>(datagrams[offset].bytes.size());
            std::memcpy(CMSG_DATA(c), &size, sizeof size);
        }
        carried[count] = run;
        used += run;
        offset += run;
        ++count;
    }
    const int sent = ::sendmmsg(fd, messages.data(), static_cast<unsigned>(count), MSG_DONTWAIT);
    if (sent <= 0) {
        if (errno == EIO && carried[0] > 1) {
            // The kernel cannot segment on this route: every datagram on its own from now on.
            segmentation.store(0, std::memory_order_relaxed);
            return send_each(fd, datagrams);
        }
        // Refused (no room): the first message's datagrams are dropped, as QUIC allows.
        return carried[0];
    }
    std::size_t done = 0;
    for (int i = 0; i < sent; ++i) done += carried[static_cast<std::size_t>(i)];
    return done;
}

}  // namespace

void segment_datagrams(bool on) noexcept {
    segmentation.store(on ? 1 : 0, std::memory_order_relaxed);
}

std::size_t send_datagrams(native_socket fd,
                           std::span<const outgoing_datagram> datagrams) noexcept {
    int on = segmentation.load(std::memory_order_relaxed);
    if (on < 0) {
        int size = 0;
        socklen_t length = sizeof size;
        on = ::getsockopt(fd, SOL_UDP, UDP_SEGMENT, &size, &length) == 0 ? 1 : 0;
        segmentation.store(on, std::memory_order_relaxed);
    }
    // A lone datagram, or segmentation off: a message each.
    if (on == 0 || datagrams.size() == 1) return send_each(fd, datagrams);
    return send_segmented(fd, datagrams);
}

ssize_t send_datagram(native_socket fd, const outgoing_datagram& d) noexcept {
    return ::sendto(fd, d.bytes.data(), d.bytes.size(), MSG_DONTWAIT, d.to, d.to_length);
}

}  // namespace tern::detail::platform

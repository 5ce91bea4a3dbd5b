#pragma once
// A UDP socket on one event loop, for QUIC (docs/http3.md): non-blocking, read on readiness
// until EAGAIN (a batch at a time), sent a batch at a time (or sendto), through the platform
// seam (platform/datagrams.hpp: recvmmsg and sendmmsg on Linux), and one timer for the
// protocol's nearest expiry. It knows no protocol: what it reads goes to a
// datagram_receiver (http/datagram_port.hpp), and the receiver sends through it. Loop thread
// only.

#include "http/datagram_port.hpp"
#include "http/exchange_port.hpp"

#include "net/waitable.hpp"
#include "platform/socket_api.hpp"

#include <asio/io_context.hpp>
#include <asio/steady_timer.hpp>

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace tern::detail {

class datagram_socket;

/// The sockets of one UDP port, a worker's each (SO_REUSEPORT), and what the protocols over
/// them share. Filled while the server starts, before any loop runs; read-only after. It
/// outlives the sockets (the server owns it), and a socket outlives its worker's loop.
struct datagram_group {
    unsigned size = 1;  // the sockets it will have, known before the first joins
    // Each socket with its worker's door: the loops run without locks
    // (ASIO_CONCURRENCY_HINT_UNSAFE), so another thread reaches one only through its door.
    struct member {
        datagram_socket* socket;
        std::shared_ptr<loop_door> door;
    };
    std::vector<member> sockets;
    std::shared_ptr<void> shared;
};

class datagram_socket final : public datagram_sender {
public:
    /// Binds a UDP socket to `host`:`port` (0: any free port) on `io`'s loop. Throws
    /// std::system_error when it cannot.
    datagram_socket(asio::io_context& io, const std::string& host, std::uint16_t port,
                    datagram_receiver& receiver);
    /// As above, with the receiver given later (`set_receiver`, before `start`), as the
    /// next socket of `group` (which it joins: see datagram_sender::index), reached from
    /// other loops through `door`.
    datagram_socket(asio::io_context& io, const std::string& host, std::uint16_t port,
                    datagram_group* group = nullptr, std::shared_ptr<loop_door> door = nullptr);
    ~datagram_socket();
    datagram_socket(const datagram_socket&) = delete;
    /// Throws std::system_error (EADDRINUSE) when `host`:`port` is bound already, by another
    /// process or server: with SO_REUSEPORT on both, a second bind by the same user would
    /// succeed and the kernel would share the port's datagrams between them.
    static void refuse_in_use(const std::string& host, std::uint16_t port);
    datagram_socket& operator=(const datagram_socket&) = delete;

    /// The bound port.
    std::uint16_t port() const noexcept { return port_; }
    void set_receiver(datagram_receiver& receiver) noexcept { receiver_ = &receiver; }
    /// Starts reading.
    void start();
    /// Sends one datagram to `to`; a datagram the kernel has no room for is dropped (QUIC
    /// retransmits). False when it was not sent.
    bool send(std::span<const std::uint8_t> bytes, const sockaddr* to,
              socklen_t to_length) override;
    /// Through platform::send_datagrams (Linux: up to `batch` datagrams a call).
    void send_many(std::span<const datagram_view> datagrams) override;
    /// `receiver.on_expiry()` at `when` (replacing the time given before), never earlier.
    /// A time already come is run from the loop's queue, without the timer; a later time than
    /// the one the timer waits for leaves the timer alone (when it fires it waits again, for
    /// the time wanted then). QUIC moves its expiry at almost every datagram, and each new
    /// earliest time of the loop's timers was a timerfd_settime (docs/performance.md).
    void expire_at(std::chrono::steady_clock::time_point when) override;
    unsigned index() const noexcept override { return index_; }
    unsigned count() const noexcept override;
    /// Posts a copy to the other socket's loop through its door; dropped if that loop has
    /// ended, or the socket closed, by then.
    void forward(unsigned to, std::span<const std::uint8_t> bytes, const sockaddr* remote,
                 socklen_t remote_length) override;
    std::shared_ptr<void>& shared() override;
    /// Stops reading and the timer; the receiver is told nothing more.
    void close() noexcept;

private:
    void arm();
    void read_all();
    // The timer waits for `when`; a wait it replaces is told so by its generation.
    void arm_timer(std::chrono::steady_clock::time_point when);
    // What the timer or the queue does when it runs: on_expiry if the time wanted has come.
    void expiry_due();
    // A datagram another socket of the group forwarded, on this socket's loop.
    void deliver(std::span<const std::uint8_t> bytes, const sockaddr_storage& remote,
                 socklen_t remote_length);

    static constexpr std::size_t batch = 16;
    static constexpr std::size_t max_datagram = 65'527;
    datagram_receiver* receiver_ = nullptr;
    datagram_group* group_ = nullptr;
    std::shared_ptr<void> own_shared_;  // shared() without a group
    unsigned index_ = 0;
    waitable socket_;
    asio::steady_timer timer_;
    using clock = std::chrono::steady_clock;
    clock::time_point wanted_ = clock::time_point::max();     // the receiver's last expire_at
    clock::time_point armed_for_ = clock::time_point::max();  // the timer's wait; max: none
    std::uint64_t timer_generation_ = 0;                      // of the timer's latest wait
    bool queued_ = false;  // an expiry_due is in the loop's queue
    sockaddr_storage local_{};
    socklen_t local_length_ = 0;
    std::uint16_t port_ = 0;
    bool open_ = true;
    std::vector<std::uint8_t> buffer_;  // batch × max_datagram bytes, read into
    std::array<sockaddr_storage, batch> from_{};
};

}  // namespace tern::detail

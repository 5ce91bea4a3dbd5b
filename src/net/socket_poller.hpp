#pragma once
// The readiness of one loop's connection sockets (and of the application's descriptors a
// coroutine waits for, net/fd_waits.hpp). Its users do their reads and writes themselves, in
// the handler that tells them of readiness. Why not asio's own socket operations: its read
// first tries a recv that fails on a keep-alive connection (the next request has not come
// yet), and it needs a buffer per connection that outlives the call; here a loop reads every
// connection into one buffer (docs/architecture.md, "The read path").
//
// Two implementations, chosen at build time (TERN_IO, docs/platforms.md), one interface:
// - linux (socket_poller_linux.cpp): an epoll set of the loop's own, edge-triggered, that
//   asio watches as one descriptor. A socket is added once, when its connection starts, and
//   its connection is told of every change (bytes or room arrived, the peer's end, an error)
//   without asking; want() is empty and inline, so it costs nothing.
// - portable (socket_poller_portable.cpp): asio's own waits (async_wait) on a descriptor
//   object that does not own the descriptor: kqueue, IOCP or select underneath. It tells only
//   what was asked for: a user that found its descriptor empty (or full) says so with want(),
//   and is told once when that changed. Nothing is waited for while nobody asked, so bytes
//   left unread never make the loop spin. On Windows (socket_poller_windows.cpp) the same, on
//   a duplicate of each socket held by an asio socket (Windows has no descriptor objects).

#include "platform/socket_api.hpp"

#include <asio/io_context.hpp>
#include <asio/posix/stream_descriptor.hpp>

#if defined(_WIN32)
#include <asio/ip/tcp.hpp>
#endif

#if !defined(TERN_IO_PORTABLE)
#include <sys/epoll.h>
#endif

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <unordered_map>

namespace tern::detail {

/// What the poller tells of a watched socket.
class poll_target {
public:
    /// What the socket's readiness became since the last call: `readable` (bytes, the peer's
    /// end or an error arrived), `writable` (room to send, or an error), `ended` (the peer's
    /// end of the stream or an error, which stays readable however much is read).
    virtual void on_ready(bool readable, bool writable, bool ended) = 0;

protected:
    ~poll_target() = default;
};

#if !defined(TERN_IO_PORTABLE)

class socket_poller {
public:
    /// Throws std::system_error when the epoll set cannot be made.
    explicit socket_poller(asio::io_context& io);
    socket_poller(const socket_poller&) = delete;
    socket_poller& operator=(const socket_poller&) = delete;

    /// Tells `target` of every change of `fd`'s readiness from now on, until forget(). The
    /// readiness `fd` has now is told too (once). False with errno when epoll refuses it.
    bool watch(platform::native_socket fd, poll_target& target) noexcept;
    /// Stops telling `target` (call before `fd` closes). A change already taken from the set
    /// in this round is dropped, so `target` may be destroyed afterwards.
    void forget(platform::native_socket fd, poll_target& target) noexcept;
    /// `target` found `fd` empty (`write` false) or full (`write` true) and waits for that
    /// to change. Nothing here: every change is told anyway.
    void want(platform::native_socket /*fd*/, poll_target& /*target*/, bool /*write*/) noexcept {}

private:
    static constexpr std::size_t batch_size = 64;
    void arm();
    void on_ready();

    asio::posix::stream_descriptor set_;  // the epoll set, watched by asio's reactor
    std::array<epoll_event, batch_size> batch_{};
    std::size_t batch_next_ = 0;  // the change told next in the round under way
    std::size_t batch_end_ = 0;
    // The set is watched only while it holds a socket: a loop with no connection has nothing
    // outstanding and can end. A wait given up (the last socket forgotten) may still
    // complete; its round number says it is stale.
    std::size_t watched_ = 0;
    bool armed_ = false;
    std::uint32_t round_ = 0;
};

#else

class socket_poller {
public:
    explicit socket_poller(asio::io_context& io) noexcept : io_(io) {}
    ~socket_poller();
    socket_poller(const socket_poller&) = delete;
    socket_poller& operator=(const socket_poller&) = delete;

    /// Starts watching `fd` for `target`; nothing is told until want() asks. False with
    /// errno when it cannot be waited for: EPERM for a regular file or a directory (as the
    /// epoll set), EMFILE for a descriptor asio's select reactor cannot hold (FD_SETSIZE).
    bool watch(platform::native_socket fd, poll_target& target) noexcept;
    /// Stops watching (call before `fd` closes): a wait under way ends untold, so `target`
    /// may be destroyed afterwards.
    void forget(platform::native_socket fd, poll_target& target) noexcept;
    /// `target` found `fd` empty (`write` false) or full (`write` true): once it is readable
    /// (writable) again, `target.on_ready` says so, in a handler of its own. One wait per
    /// direction at a time; asking again while one is under way changes nothing.
    void want(platform::native_socket fd, poll_target& target, bool write) noexcept;
#if defined(_WIN32)
    /// Windows (socket_poller_windows.cpp): keeps `socket`, asio's, for the waits on `fd`, a
    /// duplicate of it that its transport reads and writes (net/waitable.hpp, take_socket).
    /// Windows binds a socket to one completion port once, so the waits go through the asio
    /// socket that bound it; it is closed at forget(), the duplicate by its owner.
    void hold(platform::native_socket fd, asio::ip::tcp::socket socket);
#endif

private:
    struct watched;
    asio::io_context& io_;
    std::unordered_map<const poll_target*, std::shared_ptr<watched> > watched_;
#if defined(_WIN32)
    std::unordered_map<platform::native_socket, asio::ip::tcp::socket> held_;
#endif
};

#endif

}  // namespace tern::detail

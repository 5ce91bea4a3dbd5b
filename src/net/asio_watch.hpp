#pragma once
// What the portable socket pollers share (net/socket_poller.hpp; socket_poller_portable.cpp
// over an asio descriptor object, socket_poller_windows.cpp over an asio socket): a watched
// socket's asio object, its target, and at most one wait per direction, started by want().

#include "net/socket_poller.hpp"

#include <asio/error.hpp>

#include <memory>
#include <system_error>

namespace tern::detail {

/// One watched socket: `Waiter`, an asio object with async_wait; the target told of its
/// readiness (null once forgotten: a wait that ends tells nobody); whether a wait for
/// readability (writability) is under way.
template <class Waiter>
struct asio_watch {
    explicit asio_watch(asio::io_context& io) : waiter(io) {}
    Waiter waiter;
    poll_target* target = nullptr;
    bool reading = false;
    bool writing = false;
};

/// Waits for `w` to be readable (writable when `write`) unless such a wait is under way; when
/// it is, `w`'s target (if one is left) is told, in a handler of its own. A wait that ends with
/// an error tells the target too, as if the socket were ready: the call it makes next fails
/// and says why. (Windows' select reactor ends the wait of a socket whose peer reset the
/// connection with WSAECONNRESET: ignored, the connection never learnt that its client left.)
/// Only a cancelled wait (forget() closed the waiter) tells nobody.
template <class Watch>
void wait_once(const std::shared_ptr<Watch>& w, bool write) {
    using waiter = decltype(w->waiter);
    bool& under_way = write ? w->writing : w->reading;
    if (under_way) return;
    under_way = true;
    w->waiter.async_wait(write ? waiter::wait_write : waiter::wait_read,
                         [w, write](std::error_code ec) {
                             (write ? w->writing : w->reading) = false;
                             if (ec == asio::error::operation_aborted || w->target == nullptr) {
                                 return;
                             }
                             w->target->on_ready(!write, write, false);
                         });
}

}  // namespace tern::detail

#pragma once
// One loop's waits for the readiness of the application's own descriptors (a database
// client's socket, a pipe): loop_door::wait_fd, on the loop's socket poller, with a timer for
// the timeout. What lets a C client library with a non-blocking mode (libpq, hiredis) run on
// the loop without a thread per waiting request (docs/async.md). Each wait watches a
// duplicate of the application's descriptor, never its number: the application may close its
// number during the wait, and the kernel give it to another client's socket at once.

#include "http/exchange_port.hpp"
#include "net/door.hpp"
#include "net/socket_poller.hpp"

#include <chrono>
#include <functional>
#include <list>
#include <memory>

namespace tern::detail {

class fd_waits {
public:
    fd_waits(socket_poller& poller, timer_service& timers) noexcept
        : poller_(poller), timers_(timers) {}
    fd_waits(const fd_waits&) = delete;
    fd_waits& operator=(const fd_waits&) = delete;
    ~fd_waits() { drop_all(); }

    /// As loop_door::wait_fd. Throws std::system_error when `fd` is not open (EBADF), when
    /// it cannot be duplicated (EMFILE) or polled (EPERM: a regular file).
    std::shared_ptr<fd_wait> wait(int fd, bool write, std::chrono::nanoseconds timeout,
                                  std::function<void(fd_wait_end)> fn);
    /// The loop's drain has ended: every wait is forgotten and its function destroyed
    /// uncalled.
    void drop_all() noexcept;

private:
    class one;
    socket_poller& poller_;
    timer_service& timers_;
    std::list<std::shared_ptr<one>> open_;
};

}  // namespace tern::detail

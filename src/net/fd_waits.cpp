#include "net/fd_waits.hpp"

#include "platform/sockets.hpp"

#include <cerrno>
#include <exception>
#include <system_error>
#include <utility>
#include <vector>

namespace tern::detail {

class fd_waits::one final : public fd_wait,
                            public poll_target,
                            public std::enable_shared_from_this<one> {
public:
    /// Takes `own`, tern's duplicate of the application's descriptor, which close() closes.
    one(fd_waits& owner, platform::native_socket own, bool write,
        std::function<void(fd_wait_end)> fn) noexcept
        : owner_(owner), fd_(own), write_(write), fn_(std::move(fn)) {}
    one(const one&) = delete;
    one& operator=(const one&) = delete;
    ~one() = default;

    void on_ready(bool readable, bool writable, bool /*ended*/) override {
        if (write_ ? writable : readable) finish(fd_wait_end::ready);
    }
    void cancel() noexcept override {
        try {
            finish(fd_wait_end::cancelled);
        } catch (...) {
            // The function only queues the resumption: it throws only when memory runs
            // out, which is not recovered from (docs/architecture.md, "Failures").
            std::terminate();
        }
    }

    void time_out() { finish(fd_wait_end::timed_out); }

    /// Forgets the descriptor, closes tern's duplicate and gives back the function, uncalled
    /// (nothing once ended).
    std::function<void(fd_wait_end)> close() noexcept {
        if (!open_) return {};
        open_ = false;
        owner_.poller_.forget(fd_, *this);
        platform::close_socket(fd_);
        owner_.open_.erase(at_);
        return std::move(fn_);
    }

    std::list<std::shared_ptr<one>>::iterator at_;

private:
    void finish(fd_wait_end how) {
        const auto self = shared_from_this();  // erased from the list by close()
        auto fn = close();
        if (fn) fn(how);
    }

    fd_waits& owner_;
    platform::native_socket fd_;  // tern's own: the application may close its number meanwhile
    bool write_;
    bool open_ = true;
    std::function<void(fd_wait_end)> fn_;
};

namespace {

[[noreturn]] void refuse(int error, int fd) {
    throw std::system_error(error, std::generic_category(),
                            "tern: waiting for descriptor " + std::to_string(fd));
}

}  // namespace

std::shared_ptr<fd_wait> fd_waits::wait(int fd, bool write, std::chrono::nanoseconds timeout,
                                        std::function<void(fd_wait_end)> fn) {
    // The epoll set holds tern's duplicate, which tern closes at the wait's end: what the
    // application does with its own number meanwhile (close it, and the kernel gives it to
    // the next client's socket) never reaches the set. Removing the number from the set at
    // the end would take out whatever it names by then (issue 50). Each wait
    // has a duplicate of its own, so two waits on one descriptor (or on two eventfds, which
    // fstat cannot tell apart) are two registrations and never collide.
    const platform::native_socket own = platform::duplicate_descriptor(fd);
    if (own == platform::invalid_socket) refuse(errno, fd);
    auto w = std::make_shared<one>(*this, own, write, std::move(fn));
    // Told of the readiness the descriptor has now too: one already readable ends the wait
    // at the poller's next round.
    if (!poller_.watch(own, *w)) {
        const int error = errno;
        platform::close_socket(own);
        refuse(error, fd);
    }
    poller_.want(own, *w, write);  // the portable poller waits only when asked
    open_.push_front(w);
    w->at_ = open_.begin();
    if (timeout.count() > 0) {
        timers_.after(timeout, [weak = std::weak_ptr<one>(w)](bool fired) {
            if (!fired) return;
            if (auto held = weak.lock()) held->time_out();
        });
    }
    return w;
}

void fd_waits::drop_all() noexcept {
    // Closed first, destroyed after: a function may hold what owns another wait.
    std::vector<std::function<void(fd_wait_end)>> dropped;
    while (!open_.empty()) {
        const auto w = open_.front();
        dropped.push_back(w->close());
    }
}

}  // namespace tern::detail

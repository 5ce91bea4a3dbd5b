#include "net/fd_waits.hpp"

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
    one(fd_waits& owner, int fd, bool write, std::function<void(fd_wait_end)> fn) noexcept
        : owner_(owner), fd_(fd), write_(write), fn_(std::move(fn)) {}
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

    /// Forgets the descriptor and gives back the function, uncalled (nothing once ended).
    std::function<void(fd_wait_end)> close() noexcept {
        if (!open_) return {};
        open_ = false;
        owner_.poller_.forget(fd_, *this);
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
    int fd_;
    bool write_;
    bool open_ = true;
    std::function<void(fd_wait_end)> fn_;
};

std::shared_ptr<fd_wait> fd_waits::wait(int fd, bool write, std::chrono::nanoseconds timeout,
                                        std::function<void(fd_wait_end)> fn) {
    auto w = std::make_shared<one>(*this, fd, write, std::move(fn));
    open_.push_front(w);
    w->at_ = open_.begin();
    // Told of the readiness the descriptor has now too: one already readable ends the wait
    // at the poller's next round.
    if (!poller_.watch(fd, *w)) {
        const int error = errno;
        open_.erase(w->at_);
        throw std::system_error(error, std::generic_category(),
                                "tern: waiting for descriptor " + std::to_string(fd));
    }
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

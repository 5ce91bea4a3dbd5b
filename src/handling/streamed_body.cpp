#include "handling/streamed_body.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cstdio>
#include <exception>
#include <utility>

namespace tern::detail {

namespace {

// User callbacks run on the loop: one that throws is logged, not allowed into the loop.
void run_callback(const std::function<void()>& fn, const char* what) noexcept {
    if (!fn) return;
    try {
        fn();
    } catch (const std::exception& e) {
        std::fprintf(stderr, "tern: a stream's %s callback threw: %s\n", what, e.what());
    } catch (...) {
        std::fprintf(stderr, "tern: a stream's %s callback threw a non-std exception\n", what);
    }
}

class stream_tap final : public body_source {
public:
    explicit stream_tap(std::shared_ptr<streamed_body> s) noexcept : source_(std::move(s)) {}
    ~stream_tap() override {
        if (!closed_) source_->closed();
    }
    stream_tap(const stream_tap&) = delete;
    stream_tap& operator=(const stream_tap&) = delete;

    void attach(std::shared_ptr<loop_door> door, std::weak_ptr<exchange_port> port) override {
        source_->attach(std::move(door), std::move(port));
    }
    pull_status pull(std::string& out, std::size_t max) override { return source_->pull(out, max); }
    void closed() noexcept override {
        if (closed_) return;
        closed_ = true;
        source_->closed();
    }
    std::chrono::milliseconds idle_interval() const noexcept override {
        return source_->idle_interval();
    }
    void on_idle() override { source_->on_idle(); }
    bool end_on_stop() noexcept override { return source_->end_on_stop(); }
    void take_trailers(trailer_list& into) override { source_->take_trailers(into); }
    bool cut_off() const noexcept override { return source_->cut_off(); }

private:
    std::shared_ptr<streamed_body> source_;
    bool closed_ = false;
};

}  // namespace

std::shared_ptr<body_source> streamed_body::tap(std::shared_ptr<streamed_body> source) {
    return std::make_shared<stream_tap>(std::move(source));
}

bool streamed_body::cut_locked() noexcept {
    aborted_ = true;
    cut_off_.store(true, std::memory_order_release);
    pending_.clear();
    pending_at_ = 0;
    // Always a wake-up of its own: one still pending may have reached the transport during
    // a write, where it waits for the pull after the write, and a peer that never reads
    // would keep the cut-off from it until timeouts.write.
    if (!attached_) return false;
    wake_posted_ = true;
    return true;
}

bool streamed_body::need_wake() noexcept {
    if (!attached_ || wake_posted_ || pull_follows_) return false;
    wake_posted_ = true;
    return true;
}

void streamed_body::post_wake() {
    // The port is locked on the loop: the connection may be gone by then.
    door_->post([port = port_] {
        if (auto p = port.lock()) p->wake();
    });
}

bool streamed_body::write(std::string_view bytes) {
    bool wake = false;
    bool below_mark = false;
    {
        std::lock_guard lock(mutex_);
        if (closed_.load(std::memory_order_relaxed) || ended_ || aborted_) return false;
        const std::size_t queued = pending_.size() - pending_at_;
        if (queued + bytes.size() > limit_) {
            // The producer ignored the backpressure: cut the stream off rather than grow.
            wake = cut_locked();
        } else {
            if (pending_at_ > 0 && pending_at_ >= pending_.size() / 2) {
                pending_.erase(0, pending_at_);
                pending_at_ = 0;
            }
            pending_.append(bytes);
            below_mark = queued + bytes.size() < mark_;
            if (!below_mark) blocked_ = true;
            wake = need_wake();
        }
    }
    if (wake) post_wake();
    return below_mark;
}

void streamed_body::end() {
    bool wake = false;
    {
        std::lock_guard lock(mutex_);
        if (ended_ || aborted_) return;
        ended_ = true;
        wake = need_wake();
    }
    if (wake) post_wake();
}

void streamed_body::abort() {
    bool wake = false;
    {
        std::lock_guard lock(mutex_);
        if (ended_ || aborted_) return;
        wake = cut_locked();
    }
    if (wake) post_wake();
}

void streamed_body::handles_gone() {
    bool endless = false;
    {
        std::lock_guard lock(mutex_);
        endless = event_stream_;
    }
    if (endless) {
        end();
    } else {
        abort();
    }
}

// A user's callback is never destroyed under mutex_: it may hold the last handle of this
// stream, whose release calls handles_gone(), which takes mutex_ (issue 31). Each function
// below that replaces or drops one moves it into a local declared before the lock, so it
// dies after the lock is released.

void streamed_body::on_writable(std::function<void()> fn) {
    std::lock_guard lock(mutex_);
    if (closed_.load(std::memory_order_relaxed)) return;  // fn dies after the lock
    std::swap(on_writable_, fn);  // the one replaced dies with fn, after the lock
}

void streamed_body::on_close(std::function<void()> fn) {
    {
        std::lock_guard lock(mutex_);
        if (!closed_.load(std::memory_order_relaxed)) {
            std::swap(on_close_, fn);  // the one replaced dies with fn, after the lock
            return;
        }
    }
    run_callback(fn, "on_close");  // over already: now, on this thread
}

void streamed_body::trailer(std::string_view name, std::string_view value) {
    std::lock_guard lock(mutex_);
    if (ended_ || aborted_) return;
    set_trailer(trailers_, name, value);
}

void streamed_body::take_trailers(trailer_list& into) {
    trailer_list mine;
    {
        std::lock_guard lock(mutex_);
        mine.swap(trailers_);
    }
    merge_trailers(into, mine);
}

void streamed_body::make_event_stream(std::chrono::milliseconds idle, std::string ping) {
    std::lock_guard lock(mutex_);
    event_stream_ = true;
    idle_ = idle;
    ping_ = std::move(ping);
}

void streamed_body::pull_follows(bool on) noexcept {
    std::lock_guard lock(mutex_);
    pull_follows_ = on;
}

void streamed_body::attach(std::shared_ptr<loop_door> door, std::weak_ptr<exchange_port> port) {
    std::lock_guard lock(mutex_);
    door_ = std::move(door);
    port_ = std::move(port);
    attached_ = true;
    // What was written before the head went out is pulled after it: no wake-up needed.
}

pull_status streamed_body::pull(std::string& out, std::size_t max) {
    std::function<void()> writable;
    pull_status status = pull_status::more;
    {
        std::lock_guard lock(mutex_);
        wake_posted_ = false;
        if (aborted_) return pull_status::aborted;
        const std::size_t n = std::min(max, pending_.size() - pending_at_);
        out.append(pending_, pending_at_, n);
        pending_at_ += n;
        const std::size_t left = pending_.size() - pending_at_;
        if (left == 0) {
            pending_.clear();
            pending_at_ = 0;
            if (ended_) status = pull_status::ended;
        }
        if (blocked_ && left < mark_) {
            blocked_ = false;
            writable = on_writable_;
        }
    }
    run_callback(writable, "on_writable");
    return status;
}

void streamed_body::closed() noexcept {
    // The callbacks may hold handles of this stream: let go of them (and of the bytes),
    // after the lock is released (declared first, destroyed last).
    std::function<void()> writable;
    std::function<void()> fn;
    {
        std::lock_guard lock(mutex_);
        if (closed_.load(std::memory_order_relaxed)) return;
        closed_.store(true, std::memory_order_release);
        std::swap(fn, on_close_);
        std::swap(writable, on_writable_);
        std::string().swap(pending_);
        pending_at_ = 0;
    }
    run_callback(fn, "on_close");
}

void streamed_body::on_idle() {
    std::lock_guard lock(mutex_);
    if (ended_ || aborted_ || ping_.empty() || pending_.size() > pending_at_) return;
    pending_.append(ping_);
}

bool streamed_body::end_on_stop() noexcept {
    std::lock_guard lock(mutex_);
    if (!event_stream_) return false;
    ended_ = true;
    return true;
}

}  // namespace tern::detail

#pragma once
// The buffer between a streamed body's producer (any thread, through response_stream or
// sse_client) and the transport that pulls it on its loop (http/exchange_port.hpp
// body_source). docs/architecture.md, "Responses that outlive the handler", piece 4.

#include "http/exchange_port.hpp"

#include <atomic>
#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

namespace tern::detail {

class streamed_body {
public:
    /// `mark`: `write` says false at or above it; `limit`: a write past it aborts the stream.
    streamed_body(std::size_t mark, std::size_t limit) noexcept : mark_(mark), limit_(limit) {}

    // ---- producer side, any thread -----------------------------------------------------
    bool write(std::string_view bytes);
    void end();
    void abort();
    /// Nothing more will be sent: the transport let go, or the body was cut off.
    bool is_closed() const noexcept { return closed_.load(std::memory_order_acquire) || cut_off(); }
    bool cut_off() const noexcept { return cut_off_.load(std::memory_order_acquire); }
    void on_writable(std::function<void()> fn);
    void on_close(std::function<void()> fn);
    /// Sets a trailer field sent after the body (checked by the caller); ignored once the
    /// body has ended or been cut off.
    void trailer(std::string_view name, std::string_view value);
    /// The last producer handle is gone: an SSE stream ends, another is aborted.
    void handles_gone();

    // ---- SSE ---------------------------------------------------------------------------
    /// Makes this an endless event stream: `ping` is sent after `idle` of silence (zero:
    /// never), it ends (not aborts) when its handles are gone, and it ends at server stop.
    void make_event_stream(std::chrono::milliseconds idle, std::string ping);

    // ---- transport side, on the loop (through the tap) ---------------------------------
    void attach(std::shared_ptr<loop_door> door, std::weak_ptr<exchange_port> port);
    pull_status pull(std::string& out, std::size_t max);
    void closed() noexcept;
    void take_trailers(trailer_list& into);
    std::chrono::milliseconds idle_interval() const noexcept { return idle_; }
    void on_idle();
    bool end_on_stop() noexcept;
    /// On the loop, around work after which the transport pulls anyway (an upgraded
    /// protocol's `receive`): while on, what is written posts no wake-up through the door.
    void pull_follows(bool on) noexcept;

    /// The transport's view of `source`: a body_source that tells the source it is closed
    /// when the transport lets go of it, whatever happened to the response (an exception
    /// replaced it, a HEAD, the client left), so a producer never waits on a dropped stream.
    static std::shared_ptr<body_source> tap(std::shared_ptr<streamed_body> source);

private:
    // Cuts the body off (with the lock held): what is queued is dropped.
    bool cut_locked() noexcept;
    // Queues a wake-up of the transport unless one is on its way (called with the lock held;
    // the post happens after it is released: `post_wake` says whether to).
    bool need_wake() noexcept;
    void post_wake();

    const std::size_t mark_;
    const std::size_t limit_;
    mutable std::mutex mutex_;
    std::string pending_;         // bytes not pulled yet, from pending_at_
    std::size_t pending_at_ = 0;  // pulled bytes at the front, dropped when compacting
    bool ended_ = false;
    bool aborted_ = false;
    bool attached_ = false;
    bool wake_posted_ = false;
    bool pull_follows_ = false;  // pull_follows(true): the transport pulls next anyway
    bool blocked_ = false;       // a write said false; on_writable runs when it drains
    std::atomic<bool> closed_{false};
    std::atomic<bool> cut_off_{false};  // aborted_, readable without the lock
    trailer_list trailers_;             // response_stream::trailer, sent after the last byte
    std::function<void()> on_writable_;
    std::function<void()> on_close_;
    std::shared_ptr<loop_door> door_;
    std::weak_ptr<exchange_port> port_;
    // SSE
    bool event_stream_ = false;
    std::chrono::milliseconds idle_{0};
    std::string ping_;
};

}  // namespace tern::detail

#pragma once
// A request whose response outlives the handler chain (context::defer): its own copy of the
// request, the path parameters and the response so far, so that it needs nothing of the
// connection's per-request buffers; completed from any thread through the loop door, the
// rest of the chain then runs on the loop (docs/architecture.md, "Responses that outlive
// the handler", piece 3).

#include "handling/dispatch.hpp"
#include "handling/exchange.hpp"
#include "handling/request_metrics.hpp"
#include "http/exchange_port.hpp"

#include <tern/context.hpp>

#include <atomic>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <string>

namespace tern::detail {

class held_exchange final : public held_link, public std::enable_shared_from_this<held_exchange> {
public:
    /// On the loop, in the handler: copies what `from` refers to and takes its response.
    explicit held_exchange(exchange& from);
    held_exchange(const held_exchange&) = delete;
    held_exchange& operator=(const held_exchange&) = delete;

    /// The exchange and context the rest of the chain (and a completion's fill) use.
    exchange& state() noexcept { return ex_; }
    context& ctx() noexcept { return ctx_; }

    /// On the loop, when the handler chain has returned: the handler chain and the dispatch
    /// state the rest of the chain needs, and the transport to finish on.
    void attach(const handler_chain& p, const dispatch_state& st, exchange_port& port) noexcept;
    /// On the loop: the handler threw after defer(); its response goes back to `into` (to
    /// be replaced by the mapped error) and every handle's completion is refused.
    void take_back(exchange& into) noexcept;

    // ---- any thread (the deferred handles) ---------------------------------------------
    bool complete(handler fill, std::exception_ptr error);
    /// The last handle is gone without a completion: 500.
    void drop() noexcept;
    bool cancelled() const noexcept { return abandoned_.load(std::memory_order_acquire); }
    void on_cancel(std::function<void()> fn);
    /// deferred::when_readable / when_writable: any thread; the wait starts on the loop.
    void when_ready(int fd, bool write, std::chrono::nanoseconds timeout,
                    std::function<void(io_ready)> fn);

    /// On the loop, at tern::request_timeout's deadline: unless completed by then, the
    /// application is told as when the client leaves (cancelled(), on_cancel, a descriptor
    /// wait ends), every later completion is refused, and the request is answered with
    /// `status` through the error handlers.
    void time_out(int status) noexcept;

    // held_link, on the loop
    void abandon() noexcept override;

private:
    enum class stage { pending, completing, done };
    bool begin_completion(handler fill, std::exception_ptr error, bool dropped);
    void finish_on_loop(const handler& fill, const std::exception_ptr& error,
                        bool dropped) noexcept;
    void start_fd_wait(int fd, bool write, std::chrono::nanoseconds timeout,
                       std::function<void(io_ready)> fn);

    request req_;
    response res_;
    exchange_scratch scratch_;
    std::string remote_ip_;
    exchange ex_;
    context ctx_;
    std::shared_ptr<loop_door> door_;
    in_flight_mark in_flight_;  // a request abandoned or dropped is not in flight any more

    // The loop's side: set by attach, cleared when the response is finished or abandoned.
    const handler_chain* chain_ = nullptr;
    dispatch_state st_;
    exchange_port* port_ = nullptr;
    bool taken_back_ = false;

    std::mutex mutex_;
    stage stage_ = stage::pending;
    std::atomic<bool> abandoned_{false};
    std::function<void()> on_cancel_;
    /// The descriptor wait under way (when_ready), cancelled by abandon(). Loop thread only.
    std::shared_ptr<fd_wait> fd_wait_;
};

}  // namespace tern::detail

// tern::deferred: copies of one handle share a token; the held exchange hears when the last
// copy is gone (handling/held_exchange.hpp).

#include "handling/held_exchange.hpp"

#include <tern/deferred.hpp>

#include <stdexcept>
#include <utility>

namespace tern {

namespace detail {

struct deferred_token {
    std::shared_ptr<held_exchange> held;
    explicit deferred_token(std::shared_ptr<held_exchange> h) noexcept : held(std::move(h)) {}
    ~deferred_token() { held->drop(); }
    deferred_token(const deferred_token&) = delete;
    deferred_token& operator=(const deferred_token&) = delete;
};

}  // namespace detail

deferred::deferred(std::shared_ptr<detail::held_exchange> state)
    : token_(std::make_shared<detail::deferred_token>(std::move(state))) {}

bool deferred::complete(std::function<void(context&)> fill) const {
    return token_ && token_->held->complete(std::move(fill), nullptr);
}

bool deferred::fail(std::exception_ptr error) const {
    if (!error) error = std::make_exception_ptr(std::logic_error("tern: deferred::fail(nullptr)"));
    return token_ && token_->held->complete({}, std::move(error));
}

bool deferred::cancelled() const noexcept { return token_ && token_->held->cancelled(); }

void deferred::on_cancel(std::function<void()> fn) const {
    if (token_) token_->held->on_cancel(std::move(fn));
}

void deferred::when_readable(int fd, std::chrono::nanoseconds timeout,
                             std::function<void(io_ready)> fn) const {
    if (token_) token_->held->when_ready(fd, false, timeout, std::move(fn));
}

void deferred::when_writable(int fd, std::chrono::nanoseconds timeout,
                             std::function<void(io_ready)> fn) const {
    if (token_) token_->held->when_ready(fd, true, timeout, std::move(fn));
}

}  // namespace tern

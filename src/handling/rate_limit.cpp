// tern::rate_limit (include/tern/rate_limit.hpp): the before filter over web/rate_table.hpp.

#include "web/rate_table.hpp"

#include <tern/context.hpp>
#include <tern/rate_limit.hpp>

#include <array>
#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>

namespace tern {

namespace {

using detail::rate_table;

// Threads get a small index the first time they use any rate limit; a limit keeps one table
// per index, made on that thread's first request. Event loops are few; the rare thread past
// `per_thread_tables` shares one table behind a mutex (never an event loop in practice).
constexpr std::size_t per_thread_tables = 128;
std::atomic<std::size_t> next_thread_index{0};

std::size_t thread_index() noexcept {
    thread_local const std::size_t index = next_thread_index.fetch_add(1);
    return index;
}

// Whole seconds, rounded up: what Retry-After and the fields' `t` say (at least 1 for a wait).
long long seconds_up(rate_table::clock::duration d) {
    const auto s = std::chrono::ceil<std::chrono::seconds>(d).count();
    return s < 0 ? 0 : s;
}

class limiter {
public:
    explicit limiter(rate_limit_config cfg) : cfg_(std::move(cfg)) {
        if (cfg_.requests == 0) {
            throw std::invalid_argument("tern: rate_limit requests must be at least 1");
        }
        if (cfg_.per <= std::chrono::milliseconds::zero()) {
            throw std::invalid_argument("tern: rate_limit per must be positive");
        }
        if (cfg_.max_keys == 0) {
            throw std::invalid_argument("tern: rate_limit max_keys must be at least 1");
        }
        if (cfg_.burst == 0) cfg_.burst = cfg_.requests;
        const auto window = std::chrono::ceil<std::chrono::seconds>(cfg_.per).count();
        policy_ = "\"" + cfg_.name + "\";q=" + std::to_string(cfg_.requests) +
                  ";w=" + std::to_string(window);
    }

    void operator()(context& ctx) {
        const std::string key = cfg_.key ? cfg_.key(ctx) : ctx.ip();
        if (key.empty()) return;
        const auto now = rate_table::clock::now();
        rate_table::decision d;
        const std::size_t index = thread_index();
        if (index < per_thread_tables) {
            d = table(index).take(key, now);
        } else {
            const std::lock_guard lock(shared_mutex_);
            d = table(per_thread_tables).take(key, now);
        }
        const std::string state = "\"" + cfg_.name + "\";r=" + std::to_string(d.remaining) +
                                  ";t=" + std::to_string(seconds_up(d.reset));
        ctx.header("RateLimit-Policy", policy_, keep_on_error);
        ctx.header("RateLimit", state, keep_on_error);
        if (d.allowed) return;
        ctx.header("Retry-After", std::to_string(std::max(1LL, seconds_up(d.retry_after))),
                   keep_on_error);
        ctx.status(429);  // tern makes the body (and app.error(429) shapes it)
        ctx.skip_remaining();
    }

private:
    rate_table& table(std::size_t index) {
        rate_table* t = tables_[index].load(std::memory_order_acquire);
        if (t == nullptr) {
            // Only the thread with this index makes its table (the last one under the mutex).
            owned_[index] =
                std::make_unique<rate_table>(cfg_.max_keys, cfg_.requests, cfg_.per, cfg_.burst);
            t = owned_[index].get();
            tables_[index].store(t, std::memory_order_release);
        }
        return *t;
    }

    rate_limit_config cfg_;
    std::string policy_;
    std::array<std::atomic<rate_table*>, per_thread_tables + 1> tables_{};
    std::array<std::unique_ptr<rate_table>, per_thread_tables + 1> owned_{};
    std::mutex shared_mutex_;
};

}  // namespace

handler rate_limit(rate_limit_config settings) {
    auto state = std::make_shared<limiter>(std::move(settings));
    return [state](context& ctx) { (*state)(ctx); };
}

}  // namespace tern

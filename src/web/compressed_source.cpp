#include "web/compressed_source.hpp"

#include <string>
#include <utility>

namespace tern::detail {

namespace {

/// One taken slot of a stream_coder_slots, given back when destroyed (none when empty).
class coder_slot {
public:
    coder_slot() = default;
    explicit coder_slot(std::shared_ptr<stream_coder_slots> from) noexcept
        : from_(std::move(from)) {}
    coder_slot(coder_slot&& other) noexcept = default;
    coder_slot& operator=(coder_slot&&) = delete;
    coder_slot(const coder_slot&) = delete;
    coder_slot& operator=(const coder_slot&) = delete;
    ~coder_slot() {
        if (from_) from_->give();
    }

private:
    std::shared_ptr<stream_coder_slots> from_;
};

class compressed_body final : public body_source {
public:
    compressed_body(std::shared_ptr<body_source> inner, std::unique_ptr<stream_encoder> encoder,
                    coder_slot&& slot) noexcept
        : inner_(std::move(inner)), slot_(std::move(slot)), encoder_(std::move(encoder)) {}

    void attach(std::shared_ptr<loop_door> door, std::weak_ptr<exchange_port> port) override {
        inner_->attach(std::move(door), std::move(port));
    }

    pull_status pull(std::string& out, std::size_t max) override {
        plain_.clear();
        const pull_status got = inner_->pull(plain_, max);
        if (got == pull_status::aborted) return got;
        const bool last = got == pull_status::ended;
        if (plain_.empty() && !last) return got;
        if (!encoder_->encode(plain_, last, out)) return pull_status::aborted;
        return got;
    }

    void closed() noexcept override { inner_->closed(); }
    std::chrono::milliseconds idle_interval() const noexcept override {
        return inner_->idle_interval();
    }
    void on_idle() override { inner_->on_idle(); }
    bool end_on_stop() noexcept override { return inner_->end_on_stop(); }
    bool cut_off() const noexcept override { return inner_->cut_off(); }
    void take_trailers(trailer_list& into) override { inner_->take_trailers(into); }

private:
    std::shared_ptr<body_source> inner_;
    coder_slot slot_;  ///< declared before the coder: given back after the coder's memory
    std::unique_ptr<stream_encoder> encoder_;
    std::string plain_;  // one pulled piece before compression
};

}  // namespace

bool stream_coder_slots::take() noexcept {
    std::size_t now = taken_.load(std::memory_order_relaxed);
    do {
        if (now >= cap_) return false;
    } while (!taken_.compare_exchange_weak(now, now + 1, std::memory_order_relaxed));
    return true;
}

std::shared_ptr<body_source> compressed_source(std::shared_ptr<body_source> inner, coding c,
                                               int level, stream_coder_slots* slots) {
    std::shared_ptr<stream_coder_slots> owner;
    if (slots != nullptr) owner = slots->shared_from_this();
    if (owner && !owner->take()) return nullptr;
    coder_slot slot(std::move(owner));  // from here given back on every way out
    auto encoder = make_stream_encoder(c, level);
    if (!encoder) return nullptr;
    return std::make_shared<compressed_body>(std::move(inner), std::move(encoder), std::move(slot));
}

}  // namespace tern::detail

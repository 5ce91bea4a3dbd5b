#include "web/compressed_source.hpp"

#include <string>
#include <utility>

namespace tern::detail {

namespace {

class compressed_body final : public body_source {
public:
    compressed_body(std::shared_ptr<body_source> inner,
                    std::unique_ptr<stream_encoder> encoder) noexcept
        : inner_(std::move(inner)), encoder_(std::move(encoder)) {}

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

private:
    std::shared_ptr<body_source> inner_;
    std::unique_ptr<stream_encoder> encoder_;
    std::string plain_;  // one pulled piece before compression
};

}  // namespace

std::shared_ptr<body_source> compressed_source(std::shared_ptr<body_source> inner, coding c,
                                               int level) {
    auto encoder = make_stream_encoder(c, level);
    if (!encoder) return nullptr;
    return std::make_shared<compressed_body>(std::move(inner), std::move(encoder));
}

}  // namespace tern::detail

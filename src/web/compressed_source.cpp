#include "web/compressed_source.hpp"

#include <zlib.h>

#include <string>
#include <utility>

namespace tern::detail {

namespace {

class gzip_body final : public body_source {
public:
    explicit gzip_body(std::shared_ptr<body_source> inner) noexcept : inner_(std::move(inner)) {}
    ~gzip_body() override {
        if (open_) deflateEnd(&z_);
    }
    gzip_body(const gzip_body&) = delete;
    gzip_body& operator=(const gzip_body&) = delete;

    bool start(int level) noexcept {
        // windowBits 15 + 16: the gzip wrapper (RFC 1952), as for whole bodies.
        open_ = deflateInit2(&z_, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) == Z_OK;
        return open_;
    }

    void attach(std::shared_ptr<loop_door> door, std::weak_ptr<exchange_port> port) override {
        inner_->attach(std::move(door), std::move(port));
    }

    pull_status pull(std::string& out, std::size_t max) override {
        plain_.clear();
        const pull_status got = inner_->pull(plain_, max);
        if (got == pull_status::aborted) return got;
        const bool last = got == pull_status::ended;
        if (plain_.empty() && !last) return got;
        if (!deflate_into(out, last ? Z_FINISH : Z_SYNC_FLUSH)) return pull_status::aborted;
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
    // Compresses plain_ into the end of `out` and flushes (or finishes).
    bool deflate_into(std::string& out, int flush) {
        z_.next_in = reinterpret_cast<Bytef*>(plain_.data());
        z_.avail_in = static_cast<uInt>(plain_.size());
        for (;;) {
            const std::size_t at = out.size();
            const std::size_t room = deflateBound(&z_, z_.avail_in) + 64;
            out.resize(at + room);
            z_.next_out = reinterpret_cast<Bytef*>(out.data() + at);
            z_.avail_out = static_cast<uInt>(room);
            const int rc = deflate(&z_, flush);
            out.resize(at + room - z_.avail_out);
            if (rc == Z_STREAM_END) return true;
            if (rc != Z_OK && rc != Z_BUF_ERROR) return false;
            // Done when the input is used and the flush left room to spare.
            if (z_.avail_in == 0 && z_.avail_out != 0 && flush != Z_FINISH) return true;
        }
    }

    std::shared_ptr<body_source> inner_;
    std::string plain_;  // one pulled piece before compression
    z_stream z_{};
    bool open_ = false;
};

}  // namespace

std::shared_ptr<body_source> gzip_source(std::shared_ptr<body_source> inner, int level) {
    auto body = std::make_shared<gzip_body>(std::move(inner));
    if (!body->start(level)) return nullptr;
    return body;
}

}  // namespace tern::detail

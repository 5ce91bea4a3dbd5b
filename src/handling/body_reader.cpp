// tern::body_reader (include/tern/body_reader.hpp): the handler's side of a request body read
// piece by piece. A body channel asks the transport's body_port for one piece at a time and
// hands it to the one waiting: a suspended coroutine or a callback. A body read whole before
// the handler (routes without tern::streamed_body) is one piece.

#include "handling/context_access.hpp"
#include "handling/exchange.hpp"
#include "http/exchange_port.hpp"
#include "http/request.hpp"

#include <tern/body_reader.hpp>
#include <tern/context.hpp>

#include <cstdio>
#include <exception>
#include <stdexcept>
#include <string>
#include <utility>

namespace tern {

namespace {

class body_category_impl final : public std::error_category {
public:
    const char* name() const noexcept override { return "tern.body"; }
    std::string message(int value) const override {
        switch (static_cast<body_failure>(value)) {
            case body_failure::client_left:
                return "the request body can no longer be read: the client left";
            case body_failure::too_large:
                return "the request body passed the route's body limit";
            case body_failure::idle:
                return "no request body byte arrived within timeouts.body_idle";
            case body_failure::stopped:
                return "the server stopped before the request body's end";
        }
        return "unknown request body failure";
    }
};

}  // namespace

const std::error_category& body_category() noexcept {
    static const body_category_impl instance;
    return instance;
}

body_error::body_error(body_failure why)
    : std::runtime_error(body_category().message(static_cast<int>(why))), reason_(why) {}

namespace detail {

static_assert(static_cast<int>(body_stop::client_left) ==
                  static_cast<int>(body_failure::client_left) &&
              static_cast<int>(body_stop::too_large) == static_cast<int>(body_failure::too_large) &&
              static_cast<int>(body_stop::idle) == static_cast<int>(body_failure::idle) &&
              static_cast<int>(body_stop::stopped) == static_cast<int>(body_failure::stopped));

class body_channel final : public body_sink, public std::enable_shared_from_this<body_channel> {
public:
    // A body read whole: one piece (none when empty), then the end.
    explicit body_channel(std::string_view whole) noexcept : whole_(whole), whole_mode_(true) {}
    // A streamed body: pieces from `port`; the trailers go to `req` at the end.
    body_channel(std::weak_ptr<body_port> port, request* req) noexcept
        : port_(std::move(port)), req_(req) {}

    // Whether the answer to an ask is there at once (whole body, or the reading is over).
    bool ready() noexcept {
        if (has_result_) return true;
        if (whole_mode_) {
            has_result_ = true;
            if (!std::exchange(whole_given_, true) && !whole_.empty()) {
                piece_ = whole_;
            } else {
                ended_ = true;
            }
            return true;
        }
        if (ended_ || failure_ != 0) {
            has_result_ = true;
            return true;
        }
        return false;
    }

    // False when the answer is there at once (the connection has gone): no suspension.
    bool wait(std::coroutine_handle<> h) {
        check_one_ask();
        auto port = port_.lock();
        if (!port) {
            left();
            return false;
        }
        waiter_ = h;
        port->ask(shared_from_this());
        return true;
    }

    void wait(body_reader::piece_fn fn) {
        check_one_ask();
        if (ready()) {
            deliver_to(fn);
            return;
        }
        callback_ = std::move(fn);
        ask();
    }

    // The answer of the last ask, taken (throws body_error on a failure).
    std::optional<std::string_view> take() {
        has_result_ = false;
        if (failure_ != 0) throw body_error(static_cast<body_failure>(failure_));
        if (ended_) return std::nullopt;
        return std::exchange(piece_, {});
    }

    // body_sink: called by the transport on the loop, never inside ask().
    void on_piece(std::string_view piece) override {
        piece_ = piece;
        has_result_ = true;
        deliver();
    }
    void on_end(std::span<const header_field> trailers, std::string_view storage) override {
        copy_trailers(trailers, storage);
        ended_ = true;
        has_result_ = true;
        deliver();
    }
    void on_failure(body_stop reason) override {
        failure_ = static_cast<int>(reason);
        has_result_ = true;
        deliver();
    }

private:
    void check_one_ask() const {
        if (waiter_ || callback_) {
            throw std::logic_error(
                "tern: body_reader::next called again before the last one "
                "gave its piece");
        }
    }

    void ask() {
        if (auto port = port_.lock()) {
            port->ask(shared_from_this());
            return;
        }
        left();
        deliver();
    }

    // The connection has gone: told as its close would have told it.
    void left() noexcept {
        if (failure_ == 0) failure_ = static_cast<int>(body_failure::client_left);
        has_result_ = true;
    }

    void deliver() {
        if (auto h = std::exchange(waiter_, {})) {
            h.resume();
            return;
        }
        if (auto fn = std::exchange(callback_, nullptr)) deliver_to(fn);
    }

    void deliver_to(const body_reader::piece_fn& fn) {
        std::error_code ec;
        std::optional<std::string_view> piece;
        has_result_ = false;
        if (failure_ != 0) {
            ec = make_error_code(static_cast<body_failure>(failure_));
        } else if (!ended_) {
            piece = std::exchange(piece_, {});
        }
        try {
            fn(piece, ec);
        } catch (const std::exception& e) {
            std::fprintf(stderr, "tern: a body_reader::next callback threw: %s\n", e.what());
        } catch (...) {
            std::fprintf(stderr, "tern: a body_reader::next callback threw\n");
        }
    }

    // The request the reader was made for gets the body's trailers (ctx.trailers()). It is
    // alive: the transport tells the end only while the request is unanswered, and an
    // unanswered request's exchange lives (a held one, through its handles).
    void copy_trailers(std::span<const header_field> trailers, std::string_view storage) {
        if (req_ == nullptr || trailers.empty() || storage.data() == req_->trailer_storage.data())
            return;
        req_->trailer_storage.assign(storage);
        req_->trailers.clear();
        const char* from = storage.data();
        const char* to = req_->trailer_storage.data();
        const auto moved = [&](std::string_view v) {
            return v.empty() ? v : std::string_view(to + (v.data() - from), v.size());
        };
        for (const auto& t : trailers) req_->trailers.push_back({moved(t.name), moved(t.value)});
    }

    std::weak_ptr<body_port> port_;
    request* req_ = nullptr;
    std::string_view whole_;
    bool whole_mode_ = false;
    bool whole_given_ = false;

    bool has_result_ = false;
    std::string_view piece_;
    bool ended_ = false;
    int failure_ = 0;

    std::coroutine_handle<> waiter_;
    body_reader::piece_fn callback_;
};

}  // namespace detail

body_reader::body_reader(std::shared_ptr<detail::body_channel> c) noexcept
    : channel_(std::move(c)) {}

body_reader::next_piece body_reader::next() {
    if (!channel_) channel_ = std::make_shared<detail::body_channel>(std::string_view{});
    return next_piece(channel_);
}

void body_reader::next(piece_fn fn) {
    if (!channel_) channel_ = std::make_shared<detail::body_channel>(std::string_view{});
    channel_->wait(std::move(fn));
}

body_reader::next_piece::next_piece(std::shared_ptr<detail::body_channel> c) noexcept
    : channel_(std::move(c)) {}

bool body_reader::next_piece::await_ready() const noexcept { return channel_->ready(); }

bool body_reader::next_piece::await_suspend(std::coroutine_handle<> h) { return channel_->wait(h); }

std::optional<std::string_view> body_reader::next_piece::await_resume() { return channel_->take(); }

tern::body_reader context::body_reader() {
    auto& ex = detail::context_access::of(*this);
    // A streamed body (whether or not its connection is still there: a reader of a gone
    // one fails with client_left, as its close would have said).
    const std::weak_ptr<detail::body_port> none;
    const auto& stream = ex.req.body_stream;
    if (stream.owner_before(none) || none.owner_before(stream)) {
        return tern::body_reader(
            std::make_shared<detail::body_channel>(ex.req.body_stream, &ex.req));
    }
    return tern::body_reader(std::make_shared<detail::body_channel>(ex.req.body_view()));
}

}  // namespace tern

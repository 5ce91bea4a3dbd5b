// tern::multipart_reader (include/tern/multipart_reader.hpp): the handler's side of a
// multipart/form-data body read as it arrives. A channel drives the transport-free parser
// (web/multipart_stream.hpp) with pieces of the request's body_reader, one ask at a time,
// and hands each answer to the one waiting: a suspended coroutine or a callback.

#include "handling/context_access.hpp"
#include "handling/exchange.hpp"
#include "http/header_values.hpp"
#include "http/request.hpp"
#include "http/token.hpp"
#include "web/multipart.hpp"
#include "web/multipart_stream.hpp"

#include <tern/context.hpp>
#include <tern/multipart_reader.hpp>

#include <cstdio>
#include <exception>
#include <stdexcept>
#include <string>
#include <utility>

namespace tern {

namespace {

class multipart_category_impl final : public std::error_category {
public:
    const char* name() const noexcept override { return "tern.multipart"; }
    std::string message(int value) const override {
        switch (static_cast<multipart_failure>(value)) {
            case multipart_failure::malformed:
                return "the multipart/form-data body is malformed";
            case multipart_failure::too_many_parts:
                return "the multipart/form-data body has too many parts";
            case multipart_failure::header_too_large:
                return "a multipart part's headers are too large";
            case multipart_failure::file_too_large:
                return "a multipart file part is too large";
        }
        return "unknown multipart failure";
    }
};

int multipart_http_status(multipart_failure why) noexcept {
    return why == multipart_failure::malformed ? 400 : 413;
}

multipart_failure multipart_failure_for(detail::multipart_status s) noexcept {
    switch (s) {
        case detail::multipart_status::too_many_parts:
            return multipart_failure::too_many_parts;
        case detail::multipart_status::header_too_large:
            return multipart_failure::header_too_large;
        case detail::multipart_status::file_too_large:
            return multipart_failure::file_too_large;
        default:
            return multipart_failure::malformed;
    }
}

}  // namespace

const std::error_category& multipart_category() noexcept {
    static const multipart_category_impl instance;
    return instance;
}

multipart_error::multipart_error(multipart_failure why, const std::string& message)
    : http_error(multipart_http_status(why), message), reason_(why) {}

namespace detail {

class multipart_channel final : public std::enable_shared_from_this<multipart_channel> {
public:
    multipart_channel(tern::body_reader body, std::string_view boundary,
                      const multipart_limits& limits)
        : body_(std::move(body)), parser_(boundary, limits) {}

    // What the handler asks for next.
    enum class want { part, data };

    // The coroutine form: false when the answer is there at once (no suspension).
    bool wait(want w, std::coroutine_handle<> h) {
        check_one_ask();
        want_ = w;
        if (run()) return false;
        waiter_ = h;
        return true;
    }

    void wait(want w, tern::multipart_reader::part_fn part_cb,
              tern::body_reader::piece_fn data_cb) {
        check_one_ask();
        want_ = w;
        if (run()) {
            deliver_to(part_cb, data_cb);
            return;
        }
        part_cb_ = std::move(part_cb);
        data_cb_ = std::move(data_cb);
    }

    // The answer of the last ask, taken (throws on a failure).
    std::optional<tern::multipart_part> take_part() {
        has_result_ = false;
        throw_failure();
        return std::exchange(part_, std::nullopt);
    }
    std::optional<std::string_view> take_data() {
        has_result_ = false;
        throw_failure();
        return std::exchange(data_, std::nullopt);
    }

private:
    void check_one_ask() const {
        if (waiter_ || part_cb_ || data_cb_) {
            throw std::logic_error(
                "tern: multipart_reader asked again before the last ask was answered");
        }
    }

    void throw_failure() const {
        if (!failure_) return;
        if (failure_.category() == multipart_category()) {
            throw multipart_error(static_cast<multipart_failure>(failure_.value()), message_);
        }
        throw body_error(static_cast<body_failure>(failure_.value()));
    }

    // Runs the parser on what it has; true when the ask is answered (its answer stored).
    bool advance() {
        using ev = multipart_stream::event;
        part_.reset();
        data_.reset();
        if (failure_) return true;
        if (want_ == want::data && !in_part_) return true;  // no part: its end, at once
        for (;;) {
            switch (parser_.next()) {
                case ev::need_more:
                    return false;
                case ev::part:
                    in_part_ = true;
                    if (want_ == want::part) {
                        part_ = describe(parser_.part());
                        return true;
                    }
                    break;  // not reached: a data ask stops at the part's end
                case ev::data:
                    if (want_ == want::data) {
                        data_ = parser_.data();
                        return true;
                    }
                    break;  // a part ask skips the rest of the current part
                case ev::part_end:
                    in_part_ = false;
                    if (want_ == want::data) return true;
                    break;
                case ev::end:
                    in_part_ = false;
                    return true;
                case ev::failed:
                    in_part_ = false;
                    failure_ = make_error_code(multipart_failure_for(parser_.status()));
                    message_ = parser_.message();
                    return true;
            }
        }
    }

    // Advances, reading the body as needed, until the ask is answered (true) or a piece is
    // awaited from the network (false: on_piece goes on when it comes).
    bool run() {
        for (;;) {
            if (advance()) {
                has_result_ = true;
                return true;
            }
            // The parser has used up its piece (nothing views it any more): ask for the next.
            in_ask_ = true;
            sync_answer_ = false;
            // Weak: the body's channel holds this callback until it answers, and a reader
            // the handler let go of (its coroutine destroyed at a stop) must not be kept.
            body_.next([weak = weak_from_this()](std::optional<std::string_view> piece,
                                                 std::error_code ec) {
                if (auto self = weak.lock()) self->on_piece(piece, ec);
            });
            in_ask_ = false;
            if (!sync_answer_) return false;
        }
    }

    void on_piece(std::optional<std::string_view> piece, std::error_code ec) {
        if (ec) {
            failure_ = ec;
        } else if (piece) {
            parser_.feed(*piece);
        } else {
            parser_.finish();
        }
        if (in_ask_) {
            sync_answer_ = true;  // run() goes on
            return;
        }
        if (run()) deliver();
    }

    static tern::multipart_part describe(const multipart_part& p) {
        tern::multipart_part out;
        out.field = p.name;
        out.is_file = p.has_filename;
        out.filename = p.has_filename ? safe_filename(p.filename) : std::string();
        out.raw_filename = p.filename;
        out.content_type = p.content_type;
        return out;
    }

    void deliver() {
        if (auto h = std::exchange(waiter_, {})) {
            h.resume();
            return;
        }
        auto part_cb = std::exchange(part_cb_, nullptr);
        auto data_cb = std::exchange(data_cb_, nullptr);
        deliver_to(part_cb, data_cb);
    }

    void deliver_to(const tern::multipart_reader::part_fn& part_cb,
                    const tern::body_reader::piece_fn& data_cb) {
        has_result_ = false;
        const std::error_code ec = failure_;
        try {
            if (part_cb) {
                part_cb(ec ? std::nullopt : std::exchange(part_, std::nullopt), ec);
            } else if (data_cb) {
                data_cb(ec ? std::nullopt : std::exchange(data_, std::nullopt), ec);
            }
        } catch (const std::exception& e) {
            std::fprintf(stderr, "tern: a multipart_reader callback threw: %s\n", e.what());
        } catch (...) {
            std::fprintf(stderr, "tern: a multipart_reader callback threw\n");
        }
    }

    tern::body_reader body_;
    multipart_stream parser_;
    want want_ = want::part;
    bool in_part_ = false;
    bool in_ask_ = false;
    bool sync_answer_ = false;

    bool has_result_ = false;
    std::optional<tern::multipart_part> part_;
    std::optional<std::string_view> data_;
    std::error_code failure_;  // sticky: a multipart_failure or a body_failure
    std::string message_;

    std::coroutine_handle<> waiter_;
    tern::multipart_reader::part_fn part_cb_;
    tern::body_reader::piece_fn data_cb_;
};

}  // namespace detail

multipart_reader::multipart_reader(context& ctx, const multipart_options& options) {
    auto& ex = detail::context_access::of(ctx);
    const auto type = ex.req.header("content-type");
    if (!type || !detail::iequals(detail::media_type(*type), "multipart/form-data")) {
        throw unsupported_media_type("the request body is not multipart/form-data");
    }
    const auto boundary = detail::multipart_boundary(*type);
    if (!boundary) throw bad_request("multipart/form-data without a valid boundary parameter");
    detail::multipart_limits limits;
    limits.max_file_size =
        options.max_file_size != 0 ? options.max_file_size : ex.env.max_upload_file_size;
    limits.max_parts = options.max_parts;
    limits.max_part_header_size = options.max_part_header_size;
    channel_ = std::make_shared<detail::multipart_channel>(ctx.body_reader(), *boundary, limits);
}

multipart_reader::next_part_op multipart_reader::next_part() { return next_part_op(channel_); }

void multipart_reader::next_part(part_fn fn) {
    channel_->wait(detail::multipart_channel::want::part, std::move(fn), nullptr);
}

multipart_reader::next_data_op multipart_reader::next_data() { return next_data_op(channel_); }

void multipart_reader::next_data(body_reader::piece_fn fn) {
    channel_->wait(detail::multipart_channel::want::data, nullptr, std::move(fn));
}

multipart_reader::next_part_op::next_part_op(std::shared_ptr<detail::multipart_channel> c) noexcept
    : channel_(std::move(c)) {}

bool multipart_reader::next_part_op::await_ready() const noexcept { return false; }

bool multipart_reader::next_part_op::await_suspend(std::coroutine_handle<> h) {
    return channel_->wait(detail::multipart_channel::want::part, h);
}

std::optional<multipart_part> multipart_reader::next_part_op::await_resume() {
    return channel_->take_part();
}

multipart_reader::next_data_op::next_data_op(std::shared_ptr<detail::multipart_channel> c) noexcept
    : channel_(std::move(c)) {}

bool multipart_reader::next_data_op::await_ready() const noexcept { return false; }

bool multipart_reader::next_data_op::await_suspend(std::coroutine_handle<> h) {
    return channel_->wait(detail::multipart_channel::want::data, h);
}

std::optional<std::string_view> multipart_reader::next_data_op::await_resume() {
    return channel_->take_data();
}

}  // namespace tern

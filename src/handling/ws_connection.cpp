#include "handling/ws_connection.hpp"

#include <cstdio>
#include <exception>
#include <stdexcept>
#include <utility>

namespace tern::detail {

namespace {

std::atomic<std::uint64_t> next_id{1};

// Messages shorter than this go out uncompressed even when permessage-deflate was agreed
// (RFC 7692 allows it per message): their deflate form is rarely smaller.
constexpr std::size_t compress_from_bytes = 32;

// A message buffer above this capacity is given back after its message.
constexpr std::size_t kept_message_capacity = 64 * 1024;

void drop_large(std::string& s) noexcept {
    if (s.capacity() > kept_message_capacity) {
        std::string().swap(s);
    } else {
        s.clear();
    }
}

}  // namespace

ws_connection::ws_connection(std::shared_ptr<const ws_handlers::parts> route, ws_request_info info,
                             const ws_settings& settings,
                             const std::optional<ws::deflate_params>& deflate)
    : route_(std::move(route)),
      info_(std::move(info)),
      settings_(settings),
      id_(next_id.fetch_add(1, std::memory_order_relaxed)),
      out_(settings.mark, settings.limit),
      parser_(settings.max_message, deflate.has_value()) {
    if (deflate) {
        deflater_.emplace(*deflate);
        inflater_.emplace(*deflate);
    }
}

ws_connection::~ws_connection() = default;

template <class Fn>
void ws_connection::run_callback(const char* what, Fn&& fn) noexcept {
    if (in_callback_) return;  // on_error from inside a callback: not again
    in_callback_ = true;
    std::string failure;
    try {
        tern::ws_connection handle(shared_from_this());
        fn(handle);
    } catch (const std::exception& e) {
        failure = e.what();
    } catch (...) {
        failure = "a non-std exception";
    }
    in_callback_ = false;
    if (failure.empty()) return;
    std::fprintf(stderr, "tern: a WebSocket %s callback threw: %s\n", what, failure.c_str());
    if (!closed_) fail(ws::close_code::internal_error, "a callback threw");
}

// ---- sending -----------------------------------------------------------------------------

bool ws_connection::queue_locked(std::string_view frame) {
    if (frame.size() > settings_.limit) {
        throw std::invalid_argument(
            "tern: a WebSocket message larger than max_stream_buffer cannot be sent");
    }
    return out_.write(frame);
}

bool ws_connection::send(ws::opcode op, std::string_view payload) {
    std::lock_guard lock(send_mutex_);
    if (close_sent_ || out_.is_closed()) return false;
    frame_.clear();
    if (deflater_ && payload.size() >= compress_from_bytes) {
        compressed_.clear();
        deflater_->deflate(payload, compressed_);
        ws::append_frame(frame_, op, compressed_, true, true);
        drop_large(compressed_);
    } else {
        ws::append_frame(frame_, op, payload);
    }
    const bool below = queue_locked(frame_);
    drop_large(frame_);
    return below;
}

bool ws_connection::send_prepared(std::string_view frame, ws::opcode op, std::string_view payload) {
    if (deflater_) return send(op, payload);
    std::lock_guard lock(send_mutex_);
    if (close_sent_ || out_.is_closed()) return false;
    return queue_locked(frame);
}

void ws_connection::queue_control(ws::opcode op, std::string_view payload) {
    std::lock_guard lock(send_mutex_);
    if (close_sent_) return;
    frame_.clear();
    if (op == ws::opcode::close) {
        close_sent_ = true;
        open_.store(false, std::memory_order_release);
        frame_ = std::string(payload);  // already a whole close frame
    } else {
        ws::append_frame(frame_, op, payload);
    }
    out_.write(frame_);  // a flood of pings the peer never reads pongs of is cut off here
}

void ws_connection::close(std::uint16_t code, std::string_view reason) {
    std::string frame;
    ws::append_close_frame(frame, code, reason);
    queue_control(ws::opcode::close, frame);
}

// ---- the transport's side ----------------------------------------------------------------

void ws_connection::attach(std::shared_ptr<loop_door> door, std::weak_ptr<exchange_port> port) {
    out_.attach(std::move(door), std::move(port));
    if (route_->connect) {
        run_callback("on_connect", [&](tern::ws_connection& c) { route_->connect(c); });
    }
}

std::chrono::milliseconds ws_connection::idle_interval() const noexcept {
    // Closing: the peer's close frame is waited for this long. Open: a ping after this
    // much silence, and the connection ends when a second one passes without a word back.
    if (!is_open()) return settings_.close_timeout;
    return settings_.ping_interval;
}

void ws_connection::on_idle() {
    if (!is_open() || awaiting_pong_) {
        out_.abort();  // no close frame back in time, or no answer to the last ping
        return;
    }
    awaiting_pong_ = true;
    queue_control(ws::opcode::ping, {});
}

bool ws_connection::end_on_stop() noexcept {
    close(ws::close_code::going_away, "server stopping");
    return true;
}

void ws_connection::closed() noexcept {
    if (closed_) return;
    closed_ = true;
    open_.store(false, std::memory_order_release);
    out_.closed();
    if (route_->close) {
        run_callback("on_close",
                     [&](tern::ws_connection& c) { route_->close(c, close_code_, close_reason_); });
    }
    // Handles may outlive the connection: let go of what only the connection needed.
    std::string().swap(message_);
    std::string().swap(inflated_);
    inflater_.reset();
    std::lock_guard lock(send_mutex_);
    deflater_.reset();
}

// ---- receiving ---------------------------------------------------------------------------

bool ws_connection::receive(std::string_view bytes) {
    if (!receiving_) return false;
    awaiting_pong_ = false;  // any word from the peer answers the ping
    // Echoes, pongs and closes queued from here are pulled by the transport right after:
    // a wake-up through the door for each would cost a pipe write and a loop turn.
    out_.pull_follows(true);
    struct pull_after {
        streamed_body& out;
        ~pull_after() { out.pull_follows(false); }
    } released{out_};
    for (;;) {
        const auto r = parser_.feed(bytes, message_);
        bytes.remove_prefix(r.consumed);
        switch (r.what) {
            case ws::frame_parser::event::need_more:
                return check_text();
            case ws::frame_parser::event::error:
                fail(parser_.error_code(), parser_.error_reason());
                return false;
            case ws::frame_parser::event::frame_start:
                if (!on_frame_start()) return false;
                break;
            case ws::frame_parser::event::frame_end:
                if (!on_frame_end()) return false;
                break;
        }
    }
}

bool ws_connection::on_frame_start() {
    const auto& h = parser_.header();
    if (ws::is_control(h.op)) return true;
    if (h.op == ws::opcode::continuation) {
        if (!in_message_) {
            fail(ws::close_code::protocol_error, "a continuation frame outside a message");
            return false;
        }
    } else {
        if (in_message_) {
            fail(ws::close_code::protocol_error, "a new message before the last one ended");
            return false;
        }
        in_message_ = true;
        message_op_ = h.op;
        message_compressed_ = h.rsv1;
        validated_ = 0;
        utf8_.reset();
    }
    if (h.length > settings_.max_message - std::min(settings_.max_message, message_.size())) {
        fail(ws::close_code::too_big, "the message is larger than ws_max_message_size");
        return false;
    }
    return true;
}

bool ws_connection::check_text() {
    // A text message is checked as it arrives (fail fast), unless it is compressed.
    if (!in_message_ || message_op_ != ws::opcode::text || message_compressed_) return true;
    if (validated_ == message_.size()) return true;
    const bool ok = utf8_.feed(std::string_view(message_).substr(validated_));
    validated_ = message_.size();
    if (!ok) {
        fail(ws::close_code::invalid_payload, "a text message that is not UTF-8");
        return false;
    }
    return true;
}

bool ws_connection::on_frame_end() {
    const auto& h = parser_.header();
    if (ws::is_control(h.op)) return on_control();
    if (!check_text()) return false;
    if (!h.fin) return true;
    return on_message_end();
}

bool ws_connection::on_control() {
    const auto payload = parser_.control_payload();
    switch (parser_.header().op) {
        case ws::opcode::ping:
            queue_control(ws::opcode::pong, payload);
            return true;
        case ws::opcode::pong:
            return true;
        case ws::opcode::close: {
            const auto c = ws::parse_close_payload(payload);
            if (c.error != 0) {
                fail(c.error, "an invalid close frame");
                return false;
            }
            receiving_ = false;
            close_received_ = true;
            close_code_ = c.code;
            close_reason_.assign(c.reason);
            // Answered with the same code (none when it had none); then the connection
            // ends once that is written (RFC 6455 5.5.1, 7.1.1: the server closes TCP first).
            std::string frame;
            ws::append_close_frame(frame, c.code, {});
            queue_control(ws::opcode::close, frame);
            out_.end();
            return false;
        }
        default:
            return true;
    }
}

bool ws_connection::on_message_end() {
    in_message_ = false;
    std::string_view payload = message_;
    if (message_compressed_) {
        inflated_.clear();
        switch (inflater_->inflate(message_, inflated_, settings_.max_message)) {
            case ws::inflater::status::ok:
                break;
            case ws::inflater::status::too_big:
                fail(ws::close_code::too_big, "the message inflates past ws_max_message_size");
                return false;
            case ws::inflater::status::bad_data:
                fail(ws::close_code::invalid_payload, "a compressed message zlib rejects");
                return false;
        }
        payload = inflated_;
        if (message_op_ == ws::opcode::text && !ws::is_valid_utf8(payload)) {
            fail(ws::close_code::invalid_payload, "a text message that is not UTF-8");
            return false;
        }
    } else if (message_op_ == ws::opcode::text && !utf8_.complete()) {
        fail(ws::close_code::invalid_payload, "a text message that ends inside a character");
        return false;
    }
    if (message_op_ == ws::opcode::text) {
        if (route_->message) {
            run_callback("on_message",
                         [&](tern::ws_connection& c) { route_->message(c, payload); });
        }
    } else if (route_->binary) {
        run_callback("on_binary", [&](tern::ws_connection& c) { route_->binary(c, payload); });
    }
    drop_large(message_);
    drop_large(inflated_);
    return receiving_;
}

void ws_connection::fail(std::uint16_t code, std::string_view why) {
    receiving_ = false;
    if (close_code_ == ws::close_code::abnormal) {
        close_code_ = code;
        close_reason_.assign(why);
    }
    if (route_->error) {
        run_callback("on_error", [&](tern::ws_connection& c) { route_->error(c, code, why); });
    }
    // _Fail the WebSocket Connection_ (RFC 6455 7.1.7): the close frame, then the end,
    // without waiting for the peer's answer.
    std::string frame;
    ws::append_close_frame(frame, code, why);
    queue_control(ws::opcode::close, frame);
    out_.end();
}

}  // namespace tern::detail

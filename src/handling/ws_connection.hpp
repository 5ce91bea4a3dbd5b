#pragma once
// One WebSocket connection's protocol engine, after the 101: it takes the bytes the
// transport reads (frames, messages, the closing handshake, pings) and is pulled for what
// the transport sends (docs/websocket.md; docs/architecture.md, "How the next transports
// fit"). Transport-free: the connection sees it as an http/exchange_port.hpp
// upgraded_protocol. Sending from any thread goes through the same bounded buffer as a
// streamed body (streamed_body).

#include "handling/streamed_body.hpp"
#include "http/exchange_port.hpp"
#include "http/request.hpp"
#include "ws/deflate.hpp"
#include "ws/frame.hpp"
#include "ws/utf8.hpp"

#include <tern/websocket.hpp>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tern::detail {

/// The limits of one WebSocket connection (from the app's config at the handshake).
struct ws_settings {
    std::size_t max_message = 1024 * 1024;  ///< config::ws_max_message_size
    std::chrono::milliseconds ping_interval{30'000};
    std::chrono::milliseconds close_timeout{5'000};
    std::size_t mark = 64 * 1024;     ///< config::stream_buffer_size
    std::size_t limit = 1024 * 1024;  ///< config::max_stream_buffer
};

/// What the upgrade request said, kept for the connection's life (ws_connection's getters).
struct ws_request_info {
    request req;  ///< a copy (copy_request): headers, path, query
    std::vector<std::pair<std::string, std::string>> params;  ///< decoded path parameters
    std::string remote_ip;
    std::string subprotocol;
};

class ws_connection final : public upgraded_protocol,
                            public std::enable_shared_from_this<ws_connection> {
public:
    ws_connection(std::shared_ptr<const ws_handlers::parts> route, ws_request_info info,
                  const ws_settings& settings, const std::optional<ws::deflate_params>& deflate);
    ~ws_connection() override;
    ws_connection(const ws_connection&) = delete;
    ws_connection& operator=(const ws_connection&) = delete;

    // ---- any thread --------------------------------------------------------------------
    /// Queues a data message. False: over the mark (queued), or closing/closed (not queued).
    bool send(ws::opcode op, std::string_view payload);
    /// Queues `frame`, the unmasked uncompressed frame of `payload` built once for many
    /// connections; a connection that compresses frames `payload` itself.
    bool send_prepared(std::string_view frame, ws::opcode op, std::string_view payload);
    /// Starts the closing handshake (no-op once started).
    void close(std::uint16_t code, std::string_view reason);
    bool is_open() const noexcept { return open_.load(std::memory_order_acquire); }
    void on_writable(std::function<void()> fn) { out_.on_writable(std::move(fn)); }
    const ws_request_info& info() const noexcept { return info_; }
    std::uint64_t id() const noexcept { return id_; }

    // ---- upgraded_protocol, on the loop ------------------------------------------------
    void attach(std::shared_ptr<loop_door> door, std::weak_ptr<exchange_port> port) override;
    pull_status pull(std::string& out, std::size_t max) override { return out_.pull(out, max); }
    void closed() noexcept override;
    std::chrono::milliseconds idle_interval() const noexcept override;
    void on_idle() override;
    bool cut_off() const noexcept override { return out_.cut_off(); }
    bool end_on_stop() noexcept override;
    bool receive(std::string_view bytes) override;

private:
    // Loop side.
    bool on_frame_start();
    bool on_frame_end();
    bool on_control();
    bool on_message_end();
    bool check_text();
    void fail(std::uint16_t code, std::string_view why);
    // Queues a control frame (pong, ping, close) unless a close went out already.
    void queue_control(ws::opcode op, std::string_view payload);
    // Queues `frame` with the send lock held.
    bool queue_locked(std::string_view frame);
    template <class Fn>
    void run_callback(const char* what, Fn&& fn) noexcept;

    const std::shared_ptr<const ws_handlers::parts> route_;
    const ws_request_info info_;
    const ws_settings settings_;
    const std::uint64_t id_;
    streamed_body out_;
    std::atomic<bool> open_{true};

    // Sending, any thread, under send_mutex_.
    std::mutex send_mutex_;
    bool close_sent_ = false;
    std::optional<ws::deflater> deflater_;
    std::string frame_;       // the frame being built
    std::string compressed_;  // a message being compressed

    // Receiving, on the loop.
    ws::frame_parser parser_;
    std::optional<ws::inflater> inflater_;
    ws::utf8_validator utf8_;
    std::string message_;        // the data payload of the message in progress
    std::string inflated_;       // a compressed message, inflated
    std::size_t validated_ = 0;  // bytes of a text message_ checked as UTF-8 so far
    bool in_message_ = false;
    ws::opcode message_op_ = ws::opcode::text;
    bool message_compressed_ = false;
    bool receiving_ = true;
    bool close_received_ = false;
    bool awaiting_pong_ = false;
    bool in_callback_ = false;
    bool closed_ = false;
    int close_code_ = ws::close_code::abnormal;
    std::string close_reason_;
};

}  // namespace tern::detail

// tern::ws_connection, ws_handlers and ws_clients: thin handles over a detail::ws_connection
// (handling/ws_connection.hpp).

#include "handling/ws_connection.hpp"
#include "http/token.hpp"
#include "routing/url_decode.hpp"
#include "web/cookies.hpp"
#include "ws/frame.hpp"
#include "ws/utf8.hpp"

#include <tern/websocket.hpp>

#include <algorithm>
#include <stdexcept>
#include <utility>

namespace tern {

namespace {

void check_text(std::string_view text) {
    if (!detail::ws::is_valid_utf8(text)) {
        throw std::invalid_argument("tern: a WebSocket text message must be UTF-8");
    }
}

std::uint16_t checked_code(int code) {
    // What an endpoint may send (RFC 6455 7.4): 1000, 1001, 1002, 1003, 1007..1011,
    // 1012..1014 and the application range 3000..4999.
    if (code < 0 || code > 0xFFFF ||
        !detail::ws::is_valid_close_code(static_cast<std::uint16_t>(code))) {
        throw std::invalid_argument("tern: " + std::to_string(code) +
                                    " is not a close code an endpoint may send");
    }
    return static_cast<std::uint16_t>(code);
}

}  // namespace

// ---- ws_connection -------------------------------------------------------------------------

bool ws_connection::send(std::string_view text) const {
    check_text(text);
    return connection_ && connection_->send(detail::ws::opcode::text, text);
}

bool ws_connection::send_binary(std::string_view data) const {
    return connection_ && connection_->send(detail::ws::opcode::binary, data);
}

void ws_connection::close(int code, std::string_view reason) const {
    const auto c = checked_code(code);
    if (connection_) connection_->close(c, reason);
}

bool ws_connection::is_open() const noexcept { return connection_ && connection_->is_open(); }

void ws_connection::on_writable(std::function<void()> fn) const {
    if (connection_) connection_->on_writable(std::move(fn));
}

std::string_view ws_connection::path_param(std::string_view name) const noexcept {
    if (!connection_) return {};
    for (const auto& [n, v] : connection_->info().params) {
        if (n == name) return v;
    }
    return {};
}

std::optional<std::string_view> ws_connection::header(std::string_view name) const noexcept {
    if (!connection_) return std::nullopt;
    return connection_->info().req.header(name);
}

std::optional<std::string> ws_connection::query_param(std::string_view name) const {
    if (!connection_) return std::nullopt;
    return detail::find_query_param(connection_->info().req.query, name);
}

std::optional<std::string_view> ws_connection::cookie(std::string_view name) const {
    if (!connection_) return std::nullopt;
    std::vector<detail::cookie_pair> pairs;
    for (const auto& h : connection_->info().req.headers) {
        if (detail::iequals(h.name, "Cookie")) detail::parse_cookie_header(h.value, pairs);
    }
    for (const auto& p : pairs) {
        if (p.name == name) return p.value;
    }
    return std::nullopt;
}

std::string_view ws_connection::path() const noexcept {
    return connection_ ? connection_->info().req.path : std::string_view{};
}

std::string_view ws_connection::remote_ip() const noexcept {
    return connection_ ? std::string_view(connection_->info().remote_ip) : std::string_view{};
}

std::string_view ws_connection::subprotocol() const noexcept {
    return connection_ ? std::string_view(connection_->info().subprotocol) : std::string_view{};
}

std::uint64_t ws_connection::id() const noexcept { return connection_ ? connection_->id() : 0; }

// ---- ws_handlers ---------------------------------------------------------------------------

ws_handlers& ws_handlers::on_connect(std::function<void(ws_connection&)> fn) {
    parts_.connect = std::move(fn);
    return *this;
}

ws_handlers& ws_handlers::on_message(std::function<void(ws_connection&, std::string_view)> fn) {
    parts_.message = std::move(fn);
    return *this;
}

ws_handlers& ws_handlers::on_binary(std::function<void(ws_connection&, std::string_view)> fn) {
    parts_.binary = std::move(fn);
    return *this;
}

ws_handlers& ws_handlers::on_close(std::function<void(ws_connection&, int, std::string_view)> fn) {
    parts_.close = std::move(fn);
    return *this;
}

ws_handlers& ws_handlers::on_error(std::function<void(ws_connection&, int, std::string_view)> fn) {
    parts_.error = std::move(fn);
    return *this;
}

ws_handlers& ws_handlers::subprotocols(std::vector<std::string> names) {
    parts_.subprotocols = std::move(names);
    return *this;
}

ws_handlers& ws_handlers::allowed_origins(std::vector<std::string> origins) {
    parts_.origins = std::move(origins);
    return *this;
}

// ---- ws_clients ----------------------------------------------------------------------------

void ws_clients::add(const ws_connection& c) {
    if (!c) return;
    std::lock_guard lock(mutex_);
    if (std::find(clients_.begin(), clients_.end(), c) == clients_.end()) clients_.push_back(c);
}

void ws_clients::remove(const ws_connection& c) {
    // The handle erased is released after the lock (it may be a connection's last).
    std::vector<ws_connection> gone;
    std::lock_guard lock(mutex_);
    std::erase_if(clients_, [&](const ws_connection& held) {
        if (held != c) return false;
        gone.push_back(held);
        return true;
    });
}

std::size_t ws_clients::broadcast(std::string_view text) {
    check_text(text);
    return send_all(text, true);
}

std::size_t ws_clients::broadcast_binary(std::string_view data) { return send_all(data, false); }

std::size_t ws_clients::send_all(std::string_view payload, bool text) {
    const auto op = text ? detail::ws::opcode::text : detail::ws::opcode::binary;
    std::string frame;
    detail::ws::append_frame(frame, op, payload);
    // Sent outside the lock, so a send that wakes a loop never holds up add() or remove().
    std::vector<ws_connection> targets;
    std::vector<ws_connection> gone;  // released after the lock, as in remove()
    {
        std::lock_guard lock(mutex_);
        std::erase_if(clients_, [&](const ws_connection& c) {
            if (c.is_open()) return false;
            gone.push_back(c);
            return true;
        });
        targets = clients_;
    }
    std::size_t queued = 0;
    for (const auto& c : targets) {
        if (c.connection_->send_prepared(frame, op, payload) || c.is_open()) ++queued;
    }
    return queued;
}

std::size_t ws_clients::size() const {
    std::lock_guard lock(mutex_);
    return clients_.size();
}

void ws_clients::close_all(int code, std::string_view reason) {
    const auto c = checked_code(code);
    std::vector<ws_connection> targets;
    {
        std::lock_guard lock(mutex_);
        targets.swap(clients_);
    }
    for (const auto& t : targets) t.connection_->close(c, reason);
}

}  // namespace tern

// tern::response_stream and tern::sse_client / sse_clients: thin handles over a
// streamed_body (handling/streamed_body.hpp).

#include "handling/streamed_body.hpp"
#include "http/trailer_fields.hpp"
#include "web/sse_format.hpp"

#include <tern/sse.hpp>
#include <tern/stream.hpp>

#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace tern {

namespace detail {

// Shared by the copies of one handle: when the last copy goes, the source hears of it
// (the transport holds the source itself, not this).
struct stream_token {
    std::shared_ptr<streamed_body> source;
    explicit stream_token(std::shared_ptr<streamed_body> s) noexcept : source(std::move(s)) {}
    ~stream_token() { source->handles_gone(); }
    stream_token(const stream_token&) = delete;
    stream_token& operator=(const stream_token&) = delete;
};

}  // namespace detail

response_stream::response_stream(std::shared_ptr<detail::streamed_body> source)
    : token_(std::make_shared<detail::stream_token>(std::move(source))) {}

bool response_stream::write(std::string_view bytes) const {
    return token_ && token_->source->write(bytes);
}

void response_stream::end() const {
    if (token_) token_->source->end();
}

void response_stream::trailer(std::string_view name, std::string_view value) const {
    if (const char* why = detail::trailer_refusal(name, value)) {
        throw std::invalid_argument("tern: trailer '" + std::string(name) + "' " + why);
    }
    if (token_) token_->source->trailer(name, value);
}

void response_stream::abort() const {
    if (token_) token_->source->abort();
}

bool response_stream::closed() const noexcept { return !token_ || token_->source->is_closed(); }

void response_stream::on_writable(std::function<void()> fn) const {
    if (token_) token_->source->on_writable(std::move(fn));
}

void response_stream::on_close(std::function<void()> fn) const {
    if (token_) token_->source->on_close(std::move(fn));
}

// ---- Server-Sent Events ------------------------------------------------------------------

namespace {

void check_fields(std::string_view event, std::string_view id) {
    if (!detail::sse_field_ok(event, false)) {
        throw std::invalid_argument("tern: an SSE event type may not contain CR or LF");
    }
    if (!detail::sse_field_ok(id, true)) {
        throw std::invalid_argument("tern: an SSE event id may not contain CR, LF or NUL");
    }
}

const std::string& empty_string() noexcept {
    static const std::string empty;
    return empty;
}

}  // namespace

sse_client::sse_client(response_stream stream, std::string last_event_id)
    : stream_(std::move(stream)),
      last_event_id_(std::make_shared<const std::string>(std::move(last_event_id))) {}

bool sse_client::send(std::string_view data, std::string_view event, std::string_view id) const {
    check_fields(event, id);
    std::string text;
    detail::append_sse_event(text, data, event, id);
    return stream_.write(text);
}

bool sse_client::comment(std::string_view text) const {
    std::string out;
    detail::append_sse_comment(out, text);
    return stream_.write(out);
}

bool sse_client::retry(std::chrono::milliseconds delay) const {
    std::string out;
    detail::append_sse_retry(out, delay);
    return stream_.write(out);
}

const std::string& sse_client::last_event_id() const noexcept {
    return last_event_id_ ? *last_event_id_ : empty_string();
}

bool sse_client::closed() const noexcept { return stream_.closed(); }

void sse_client::on_close(std::function<void()> fn) const { stream_.on_close(std::move(fn)); }

void sse_client::close() const { stream_.end(); }

void sse_clients::add(sse_client client) {
    if (!client || client.closed()) return;
    std::lock_guard lock(mutex_);
    clients_.push_back(std::move(client));
}

std::size_t sse_clients::broadcast(std::string_view data, std::string_view event,
                                   std::string_view id) {
    check_fields(event, id);
    std::string text;
    detail::append_sse_event(text, data, event, id);
    std::size_t sent = 0;
    // Handles of closed clients are released after the lock: the last handle of a stream
    // ends it, and whatever its callbacks hold must not be destroyed under this lock.
    std::vector<sse_client> gone;
    std::lock_guard lock(mutex_);
    std::erase_if(clients_, [&](const sse_client& c) {
        if (!c.closed()) {
            // False from write means "over the mark" (the event was still queued) or "closed".
            c.stream_.write(text);
            if (!c.closed()) {
                ++sent;
                return false;
            }
        }
        gone.push_back(c);  // a copy: the one erased is then never the last handle
        return true;
    });
    return sent;
}

std::size_t sse_clients::size() const {
    std::lock_guard lock(mutex_);
    return clients_.size();
}

void sse_clients::close_all() {
    std::vector<sse_client> gone;
    {
        std::lock_guard lock(mutex_);
        gone.swap(clients_);
    }
    for (const auto& c : gone) c.close();
}

}  // namespace tern

// One request on a stream of a multiplexed connection: see stream_exchange.hpp.

#include "http/stream_exchange.hpp"

#include "http/error.hpp"
#include "http/host.hpp"
#include "http/parser.hpp"
#include "http/protocol_host.hpp"
#include "http/spooled_body.hpp"
#include "http/status.hpp"
#include "http/token.hpp"

#include <algorithm>
#include <charconv>
#include <string>

namespace tern::detail {

stream_exchange::stream_exchange(protocol_host& host, std::shared_ptr<loop_door> door,
                                 const head_limits& limits)
    : host_(&host), door_(std::move(door)), head_(limits) {}

stream_exchange::~stream_exchange() = default;

// ---- the request ---------------------------------------------------------------------------

void stream_exchange::add_field(std::string_view name, std::string_view value, bool trailer) {
    if (trailer) {
        head_.add_trailer(name, value);
    } else {
        head_.add(name, value);
    }
}

void stream_exchange::take_head(bool ended, int major, bool secure,
                                std::string_view client_subject) {
    if (head_done_) return;
    head_done_ = true;
    request_ended_ = ended;
    const bool filled = head_.fill(req_, major);
    req_.secure = secure;
    req_.client_subject.assign(client_subject);
    if (const int status = head_.refusal_status(); status != 0) {
        refuse(status);
        return;
    }
    const auto host = req_.header("host");
    if (!filled || (host && !is_valid_host(*host))) {
        refuse(400);
        return;
    }
    if (ended) {
        ready_ = true;
        return;
    }
    const body_plan plan = host_->handler().plan_body(req_);
    body_limit_ = plan.limit;
    // A declared length over the limit is refused before any of the body is read (the
    // protocol library checks that the body adds up to it).
    if (const auto length = req_.header("content-length")) {
        std::uint64_t declared = 0;
        const auto [end, ec] =
            std::from_chars(length->data(), length->data() + length->size(), declared);
        if (ec == std::errc{} && declared > body_limit_) {
            refuse(413);
            return;
        }
        if (ec == std::errc{}) declared_ = declared;
    }
    const auto expect = req_.header("expect");
    const bool wants_continue = expect && iequals(*expect, "100-continue");
    if (plan.streamed) {
        // The route reads the body itself: its handler runs now, and the client waiting for
        // 100 Continue is invited by the first ask, not before (RFC 9110 10.1.1).
        streamed_ = true;
        continue_wanted_ = wants_continue;
        req_.body_stream =
            std::shared_ptr<body_port>(shared_from_this(), static_cast<body_port*>(this));
        ready_ = true;
        return;
    }
    if (wants_continue) send_continue();
}

void stream_exchange::take_body(std::string_view data) {
    if (refused_ || answered_ || !head_done_) return;  // answered already: dropped
    if (streamed_) {
        stream_body(data);
        return;
    }
    body_bytes_ += data.size();
    if (body_bytes_ > body_limit_) {
        refuse(413);
        return;
    }
    const parser_limits& limits = host_->limits();
    if (!spool_ && limits.spool_body_above != 0 && body_bytes_ > limits.spool_body_above) {
        // A large body goes to a temporary file as it arrives (docs/uploads.md).
        if (!admit_spool()) {
            refused_ = true;
            return;
        }
        spool_ = spooled_body::create(limits.spool_directory, limits.spool_space);
        if (!spool_) {
            refuse(500, failure_message(error::body_spool_failed));
            return;
        }
        if (!spool(req_.body)) return;
        req_.body = std::string();
    }
    if (spool_) {
        spool(data);
        return;
    }
    req_.body.append(data);
}

bool stream_exchange::spool(std::string_view data) {
    // The connection's bound first, then the server's (max_spooled_bytes); a declared length
    // is taken whole at once.
    const std::uint64_t after = std::max(declared_, spool_->size() + data.size());
    auto outcome = may_spool(after) ? spool_->reserve(after) : spooled_body::outcome::full;
    if (outcome == spooled_body::outcome::stored) outcome = spool_->append(data);
    if (outcome == spooled_body::outcome::stored) return true;
    const error why =
        outcome == spooled_body::outcome::full ? error::body_spool_full : error::body_spool_failed;
    refuse(status_of(why), failure_message(why));
    spool_.reset();  // its space is given back at once
    return false;
}

void stream_exchange::take_end() {
    if (std::exchange(request_ended_, true)) return;
    if (refused_ || answered_ || !head_done_) return;
    if (const int status = head_.refusal_status(); status != 0) {  // the trailers
        if (streamed_) return fail_body(body_stop::client_left, status);
        return refuse(status);
    }
    head_.fill_trailers(req_);
    if (streamed_) {
        // The reader hears the end once it has taken what arrived before it.
        if (body_sink_) post_feed();
        return;
    }
    if (spool_) {
        if (!spool_->finish()) {
            refuse(500, failure_message(error::body_spool_failed));
            return;
        }
        req_.spooled = std::move(spool_);
    }
    ready_ = true;
}

void stream_exchange::run() {
    if (!live() || answered_) return;
    ran_ = true;
    count_request();
    host_->handler().handle(req_, res_, remote_ip(), *this, host_->app_state());
    if (!deferred_ && !answered_) submit();
}

void stream_exchange::refuse(int status, std::string_view message) {
    refused_ = true;
    if (answered_ || !live()) return;
    if (!ran_) count_request();  // a streamed body's handler counted it
    res_.clear();
    host_->handler().handle_failure(req_, status, message, res_, remote_ip(), host_->app_state());
    submit();
    after_refusal();
}

// ---- the answer ----------------------------------------------------------------------------

bool stream_exchange::answer_has_body() const noexcept {
    const std::uint64_t length = res_.file.file ? res_.file.length : res_.body.size();
    return !req_.is_head && !status_forbids_body(res_.status) &&
           (res_.source != nullptr || length != 0);
}

std::shared_ptr<body_source> stream_exchange::take_source(bool keep) {
    auto source = std::move(res_.source);
    if (!source) return nullptr;
    if (!keep) {
        source->closed();  // HEAD, 204, 304: the head alone; the producer is told at once
        return nullptr;
    }
    const std::shared_ptr<exchange_port> port(shared_from_this(), this);
    source->attach(door_, port);
    return source;
}

std::uint64_t stream_exchange::spool_reserved() const noexcept {
    if (spool_) return spool_->reserved();
    return req_.spooled ? req_.spooled->reserved() : 0;
}

void stream_exchange::release() noexcept {
    take_back(false);
    if (auto link = std::exchange(held_, nullptr)) {
        link->abandon();
        left_held_ = link;  // the application's handle may go on working (a coroutine, ...)
    }
    spool_.reset();
    // A streamed body's reader hears that the reading ended: the server's stop (its grace
    // period is over) or the client's reset or departure. The piece handed out stays
    // valid until the reader's next ask, which fails.
    if (streamed_) {
        std::string().swap(arrived_);
        end_body_reading(host_->stopping() ? body_stop::stopped : body_stop::client_left);
    }
}

namespace {

// `from`, emptied, into `to`, unless its capacity is past what a spare keeps.
void keep_spare(std::string& from, std::string& to) noexcept {
    if (from.capacity() > exchange_buffers::spare_capacity) return;
    to = std::move(from);
    to.clear();
}

}  // namespace

void stream_exchange::give_buffers(exchange_buffers& spare) noexcept {
    keep_spare(req_.storage, spare.text);
    spare.fields = head_.give_fields();
    req_.headers.clear();
    spare.headers = std::move(req_.headers);
    res_.fields.clear();
    spare.response_fields = std::move(res_.fields);
    keep_spare(res_.content_type, spare.content_type);
    keep_spare(res_.body, spare.body);
}

void stream_exchange::take_buffers(exchange_buffers& spare) noexcept {
    head_.take_buffers(std::move(spare.text), std::move(spare.fields));
    req_.headers = std::move(spare.headers);
    req_.headers.clear();
    res_.fields = std::move(spare.response_fields);
    res_.fields.clear();
    res_.content_type = std::move(spare.content_type);
    res_.content_type.clear();
    res_.body = std::move(spare.body);
    res_.body.clear();
}

stream_exchange::work_left stream_exchange::work() const {
    work_left w;
    w.exchange_ = weak_from_this();
    w.held_ = left_held_;
    w.source_ = left_source_;
    return w;
}

void stream_exchange::stop_deferred() noexcept {
    if (deferred_) take_back(true);
}

// ---- answered later ------------------------------------------------------------------------

answer_later::resume_fn stream_exchange::defer(withdraw_fn withdraw) {
    deferred_ = true;
    withdraw_ = std::move(withdraw);
    host_->expect_posted();
    return [host = host_, self = shared_from_this()](std::function<void()> on_loop) mutable {
        // Any thread. The worker (the host) outlives its deferred requests; the stream is
        // kept by this reference until the resume has run on the loop.
        host->post(
            [self = std::move(self), fn = std::move(on_loop)]() mutable { self->resume(fn); });
    };
}

void stream_exchange::resume(const std::function<void()>& on_loop) noexcept {
    withdraw_ = nullptr;
    if (!live()) return;  // reset or gone meanwhile: nobody to answer
    deferred_ = false;
    on_loop();
    submit();  // and wakes the connection
}

bool stream_exchange::take_back(bool answer_now) noexcept {
    if (!withdraw_) return false;
    auto instead = std::exchange(withdraw_, nullptr)();
    if (!instead) return false;  // it has started: its resume comes
    host_->unexpect_posted();
    if (answer_now) resume(instead);
    return true;
}

std::shared_ptr<loop_door> stream_exchange::door() { return door_; }

void stream_exchange::hold(std::shared_ptr<held_link> link) {
    held_ = std::move(link);
    deferred_ = true;
}

void stream_exchange::finish(response&& res) {
    held_.reset();
    if (!live() || answered_) return;
    res_ = std::move(res);
    deferred_ = false;
    submit();
}

}  // namespace tern::detail

#include "net/worker.hpp"

#include "net/cancel_waits.hpp"
#include "net/transport.hpp"
#include "platform/sockets.hpp"

#include <fmt/core.h>
#include <asio/ip/v6_only.hpp>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <exception>
#include <limits>
#include <new>
#include <system_error>
#include <vector>

namespace tern::detail {

namespace {

// Descriptors kept free for the work in progress (files, spooled bodies, TLS): a
// sixteenth of RLIMIT_NOFILE, at least 16 and at most 1,024 (docs/security.md).
int descriptor_limit_less_reserve() noexcept {
    const int total = platform::descriptor_limit();
    if (total == std::numeric_limits<int>::max()) return total;
    return total - std::clamp(total / 16, 16, 1024);
}

// How long an HTTP/2 stream's look at the descriptors stands for the next ones.
constexpr std::chrono::milliseconds fd_look_interval(5);

}  // namespace

worker::worker(shared_state& shared)
    : shared_(shared), app_state_(shared.handler.make_loop_state()), tls_(shared.tls) {
    // What the protocols read per request (protocol_host), pointed at once.
    loop_ = loop_view{&shared_.handler, app_state_.get(),  &shared_.settings,
                      &shared_.limits,  &shared_.stopping, &shared_.closing_connections,
                      &requests_,       &h2_requests_,     &h2_connections_,
                      &h3_requests_,    &h3_connections_};
    platform::native_socket read_end = platform::invalid_socket;
    platform::native_socket write_end = platform::invalid_socket;
    if (!platform::open_wake_channel(read_end, write_end)) {
        throw std::system_error(errno, std::generic_category(), "tern: the wake pipe");
    }
    std::error_code ec;
    assign_waitable(wake_, read_end, ec);
    if (ec) {
        platform::close_socket(read_end);
        platform::close_socket(write_end);
        throw std::system_error(ec, "tern: the wake pipe");
    }
    wake_write_ = write_end;
    door_ = std::make_shared<worker_door>(wake_write_);
    door_->set_timers(this, &fd_waits_);
    fd_short_at_ = descriptor_limit_less_reserve();
}

worker::~worker() {
    ending_ = true;
    // Nothing writes to the pipe once the door is shut (run() shuts it when the loop ends;
    // here for a worker whose loop never ran).
    auto left = door_->shut();
    left.clear();
    platform::close_socket(wake_write_);
}

void worker::open_listener(listener& l, const asio::ip::tcp::endpoint& endpoint) {
    l.acceptor.open(endpoint.protocol());
    // "::" serves IPv4 too (as ::ffff:a.b.c.d), whatever net.ipv6.bindv6only says.
    if (endpoint.address().is_v6() && endpoint.address().is_unspecified()) {
        l.acceptor.set_option(asio::ip::v6_only(false));
    }
    l.acceptor.set_option(asio::socket_base::reuse_address(true));
    platform::share_port(l.acceptor.native_handle());  // SO_REUSEPORT on Linux
    l.acceptor.bind(endpoint);
    l.acceptor.listen(asio::socket_base::max_listen_connections);
}

void worker::bind(const asio::ip::tcp::endpoint& endpoint) { open_listener(main_, endpoint); }

void worker::adopt(int fd, bool ipv6) {
    // A duplicate per worker: each loop watches the one socket (and its one accept queue)
    // through its own descriptor, and closes only that at stop.
    // Windows: refused (ENOTSUP), no descriptor names a socket there.
    const platform::native_socket own = platform::duplicate_descriptor(fd);
    if (own == platform::invalid_socket) {
        throw std::system_error(errno, std::generic_category(), "tern: dup listen fd");
    }
    // A Unix socket is accepted through the same acceptor type: accept(2) and the reads and
    // writes are the same calls; only TCP options (ignored where they fail) differ.
    const auto protocol = ipv6 ? asio::ip::tcp::v6() : asio::ip::tcp::v4();
    std::error_code ec;
    main_.adopted = true;
    main_.acceptor.assign(protocol, own, ec);
    if (ec) {
        platform::close_socket(own);
        throw std::system_error(ec, "tern: adopt listen fd");
    }
}

void worker::bind_plain(const asio::ip::tcp::endpoint& endpoint) {
    plain_.plain = true;
    open_listener(plain_, endpoint);
}

void worker::bind_datagrams(const std::string& host, std::uint16_t port, datagram_group& group) {
    datagrams_ = std::make_unique<datagram_socket>(io_context_, host, port, &group, door_);
    datagram_protocol_ = shared_.open_datagrams(*datagrams_, *this);
    if (!datagram_protocol_) {
        throw std::invalid_argument("tern: http3: the protocol over UDP cannot be made");
    }
    datagrams_->set_receiver(*datagram_protocol_);
}

asio::ip::tcp::endpoint worker::local_endpoint() const { return main_.acceptor.local_endpoint(); }

asio::ip::tcp::endpoint worker::plain_endpoint() const { return plain_.acceptor.local_endpoint(); }

void worker::run() {
    if (datagrams_) datagrams_->start();
    if (main_.acceptor.is_open()) accept(main_);  // the portable path: one loop's only
    if (plain_.acceptor.is_open()) accept(plain_);
    wait_for_messages();
    for (;;) {
        try {
            io_context_.run();
            report_drained();  // in case the loop ended some other way
            // Work posted for connections that are gone (a held response completed late)
            // is dropped here, on this thread; later posts are refused.
            auto left = door_->shut();
            left.clear();
            return;
        } catch (const std::bad_alloc&) {
            std::terminate();  // out of memory is not recovered from (docs/architecture.md)
        } catch (const std::exception& e) {
            // Handlers never throw by design; if one does, log it and keep the loop alive.
            fmt::print(stderr, "tern: event loop error: {}\n", e.what());
        }
    }
}

void worker::post_stop() {
    stop_posted_.store(true, std::memory_order_release);
    // write(2) is safe from any thread, unlike asio::post on a loop without locks. A full
    // pipe (EAGAIN) already holds a byte that wakes the loop.
    platform::ring_wake(wake_write_);
}

void worker::post_closing() {
    // The loop finds closing_connections set when it wakes (on_messages).
    platform::ring_wake(wake_write_);
}

void worker::post(std::function<void()> fn) {
    // The door writes its byte under its lock: the loop cannot take `fn` (and so cannot
    // finish, and this worker cannot be destroyed) before this call has stopped touching it.
    // The loop waits for every expected post, so the door is open.
    door_->post([this, fn = std::move(fn)] {
        --expected_posts_;
        fn();  // a connection's resume; it closes itself when it cannot go on
    });
}

void worker::expect_posted() {
    ++expected_posts_;
    if (!waiting_for_messages_) wait_for_messages();  // stopped already: listen again
}

void worker::unexpect_posted() noexcept {
    --expected_posts_;
    // After a stop the loop ends once nothing is left: stop listening for a post that will
    // not come.
    if (draining_ && expected_posts_ == 0 && waiting_for_messages_) {
        std::error_code ignored;
        wake_.cancel(ignored);
    }
    check_drained();
}

void worker::wait_for_messages() {
    if (waiting_for_messages_) return;  // one wait at a time: each would run on_messages
    waiting_for_messages_ = true;
    wake_.async_wait(waitable::wait_read, [this](std::error_code ec) {
        waiting_for_messages_ = false;
        if (ec == asio::error::operation_aborted) return;
        on_messages();
    });
}

void worker::on_messages() {
    platform::drain_wake(wake_.native_handle());
    for (auto& fn : door_->take()) fn();
    // A stop began: first the warning (during the grace period, or right before the stop
    // when there is none), then the stop.
    if (closing_connections() && !closing_told_) {
        closing_told_ = true;
        const std::vector<transport*> open(connections_.begin(), connections_.end());
        for (auto* c : open) c->begin_closing();
        if (datagram_protocol_) datagram_protocol_->on_closing();
    }
    if (stop_posted_.load(std::memory_order_acquire)) stop();
    check_drained();
    // After a stop the loop ends once nothing is left: no connection, no timer, and no
    // deferred request still to come back. While connections drain, a held response may
    // still be completed (through the door): keep listening for it.
    if (!draining_ || expected_posts_ > 0 || !connections_.empty() || datagram_protocol_) {
        wait_for_messages();
    }
}

// ---- the connections' deadlines -----------------------------------------------------------

void worker::schedule(transport& c, std::chrono::steady_clock::time_point when) {
    deadlines_.schedule(c, when);
    arm_deadlines();
}

void worker::unschedule(transport& c) noexcept {
    deadlines_.unschedule(c);
    // Nothing left to wait for: the timer must not keep a draining loop running.
    if (deadlines_.empty() && deadline_timer_armed_ && !ending_) {
        deadline_timer_armed_ = false;
        cancel_waits(deadline_timer_);
    }
}

void worker::arm_deadlines() {
    const auto first = deadlines_.earliest();
    if (first == std::chrono::steady_clock::time_point::max()) return;
    // An earlier firing finds nothing due and arms it again for what is first then.
    if (deadline_timer_armed_ && deadline_timer_at_ <= first) return;
    deadline_timer_armed_ = true;
    deadline_timer_at_ = first;
    deadline_timer_.expires_at(first);  // cancels the wait for a later time, if any
    deadline_timer_.async_wait([this](std::error_code ec) {
        if (ec == asio::error::operation_aborted) return;  // re-armed, or nothing left
        deadline_timer_armed_ = false;
        run_deadlines();
    });
}

void worker::run_deadlines() {
    // Taken out first, then told: a connection told may move or drop any deadline.
    const auto now = std::chrono::steady_clock::now();
    while (auto* e = deadlines_.pop_due(now)) {
        due_.push_back(static_cast<transport*>(e)->shared_from_this());
    }
    for (auto& c : due_) c->deadline_due();
    due_.clear();
    arm_deadlines();
}

void worker::forget(transport* c) noexcept {
    if (connections_.erase(c) != 0) {
        shared_.open_connections.fetch_sub(1, std::memory_order_relaxed);
    }
    check_drained();
}

void worker::check_drained() noexcept {
    // The drain is over when no connection is left and no blocking handler is still to
    // answer (even one whose client has gone: the stop lets it finish too), or at the drain
    // deadline, whichever comes first.
    if (!draining_ || !connections_.empty() || expected_posts_ > 0 || datagram_protocol_) return;
    cancel_waits(drain_timer_);
    // Nothing can come through the door for this loop any more: stop listening, so the
    // loop ends.
    if (waiting_for_messages_) {
        std::error_code ignored;
        wake_.cancel(ignored);
    }
    report_drained();
}

void worker::poll_datagrams() {
    if (!datagram_protocol_) return;
    if (!datagram_protocol_->busy()) {
        end_datagrams();
        check_drained();
        return;
    }
    datagram_poll_.expires_after(std::chrono::milliseconds(20));
    datagram_poll_.async_wait([this](const std::error_code& ec) {
        if (!ec) poll_datagrams();
    });
}

void worker::end_datagrams() noexcept {
    if (!datagram_protocol_) return;
    cancel_waits(datagram_poll_);
    datagram_protocol_.reset();  // closes its connections through the socket
    datagrams_->close();
}

void worker::after(std::chrono::nanoseconds delay, std::function<void(bool fired)> fn) {
    timers_.emplace_back(io_context_);
    const auto at = std::prev(timers_.end());
    at->expires_after(delay);
    at->async_wait([this, at, fn = std::move(fn)](std::error_code ec) {
        timers_.erase(at);
        fn(!ec);
    });
}

std::span<char> worker::file_buffer() {
    if (!file_buffer_) file_buffer_.reset(new char[file_buffer_size]);
    return {file_buffer_.get(), file_buffer_size};
}

void worker::cancel_timers() noexcept {
    for (auto& t : timers_) cancel_waits(t);
}

void worker::report_drained() noexcept {
    if (reported_drained_) return;
    reported_drained_ = true;
    // A stop: what sleeps on this loop's timers or waits for a descriptor (a coroutine
    // handler) is not waited for.
    cancel_timers();
    fd_waits_.drop_all();
    {
        std::lock_guard lock(shared_.drain_mutex);
        ++shared_.drained_workers;
        // A blocking handler still to answer (it outlived the drain): this loop runs until
        // it does, but the stop need not wait for it.
        if (expected_posts_ > 0) shared_.stragglers = true;
    }
    shared_.drained_cv.notify_all();
}

void worker::add_stats(server_stats& into) const noexcept {
    into.connections_accepted += accepted_.load(std::memory_order_relaxed);
    into.connections_refused += refused_.load(std::memory_order_relaxed);
    into.requests += requests_.load(std::memory_order_relaxed);
    into.writes += writes_.load(std::memory_order_relaxed);
    into.h2_connections += h2_connections_.load(std::memory_order_relaxed);
    into.h2_requests += h2_requests_.load(std::memory_order_relaxed);
    into.h3_connections += h3_connections_.load(std::memory_order_relaxed);
    into.h3_requests += h3_requests_.load(std::memory_order_relaxed);
    into.tls_handshakes += handshakes_.load(std::memory_order_relaxed);
    into.tls_handshake_failures += handshake_failures_.load(std::memory_order_relaxed);
    into.bytes_received += bytes_received_.load(std::memory_order_relaxed);
    into.bytes_sent += bytes_sent_.load(std::memory_order_relaxed);
}

bool worker::short_of_descriptors() noexcept {
    const auto now = std::chrono::steady_clock::now();
    if (now - fd_looked_at_ < fd_look_interval) return fd_short_;
    fd_looked_at_ = now;
    // The lowest free descriptor number, by taking it and giving it back.
    const int probe = platform::lowest_free_descriptor(wake_write_);
    fd_short_ = probe < 0 || probe >= fd_short_at_;
    return fd_short_;
}

bool worker::take_handshake_slot() noexcept {
    if (tls_ && handshakes_in_progress_ >= tls_->max_handshakes()) {
        bump(refused_);
        return false;
    }
    ++handshakes_in_progress_;
    return true;
}

void worker::handshake_ended(bool completed, const char* failure,
                             std::string_view remote_ip) noexcept {
    --handshakes_in_progress_;
    if (completed) bump(handshakes_);
    if (failure == nullptr) return;
    bump(handshake_failures_);
    // Refused hellos are the client's problem, and a scan sends thousands: one line a
    // second at most, saying how many went unlogged.
    const auto now = std::chrono::steady_clock::now();
    if (now - last_failure_line_ < std::chrono::seconds(1)) {
        ++unlogged_failures_;
        return;
    }
    last_failure_line_ = now;
    std::fprintf(stderr, "tern: TLS handshake with %.*s refused: %s",
                 static_cast<int>(remote_ip.size()), remote_ip.data(), failure);
    if (unlogged_failures_ > 0) {
        std::fprintf(stderr, " (and %llu more since the last line)",
                     static_cast<unsigned long long>(unlogged_failures_));
    }
    std::fputc('\n', stderr);
    unlogged_failures_ = 0;
}

void worker::hand_out_to(std::vector<worker*> loops) { loops_ = std::move(loops); }

void worker::hand_out(const listener& l, asio::ip::tcp::socket socket) {
    // Without SO_REUSEPORT balancing (the portable path), this loop's acceptor serves every
    // loop, in turn. Once a stop began, what is accepted stays here (served with the drain).
    // On Windows a socket stays on the loop that accepted it (net/waitable.hpp).
    if (loops_.empty() || draining_ || !sockets_move_between_loops) {
        accepted(l.plain, std::move(socket));
        return;
    }
    worker* to = loops_[next_loop_++ % loops_.size()];
    if (to == this) {
        accepted(l.plain, std::move(socket));
        return;
    }
    std::error_code ec;
    const auto protocol = socket.local_endpoint(ec).protocol();
    if (ec) {
        accepted(l.plain, std::move(socket));  // served here: its transport will close it
        return;
    }
    // Out of this loop's reactor, into the other's on its own thread; closed unserved if that
    // loop has ended by then (its door refuses the post).
    auto fd = std::make_shared<platform::socket_handle>(take_socket(socket, poller_, ec));
    if (ec || !*fd) return;
    const bool plain = l.plain;
    (void)to->door_->post([to, fd, plain, protocol] {
        asio::ip::tcp::socket adopted(to->io_context_);
        std::error_code assign_ec;
        adopted.assign(protocol, fd->get(), assign_ec);
        if (assign_ec) return;
        fd->release();
        to->accepted(plain, std::move(adopted));
    });
}

void worker::accepted(bool plain, asio::ip::tcp::socket socket) {
    bump(accepted_);
    const platform::native_socket fd = socket.native_handle();
    auto conn = std::make_shared<transport>(std::move(socket), *this);
    const std::shared_ptr<const tls_context> tls = plain ? nullptr : tls_;
    const auto open = shared_.open_connections.fetch_add(1, std::memory_order_relaxed);
    // Over the connection cap, or holding one of the last descriptors (the reserve left
    // for the work in progress): refused with an answer rather than left unaccepted.
    if (open >= shared_.settings.limits.max_concurrent_connections ||
        static_cast<long long>(fd) >= fd_short_at_) {
        shared_.open_connections.fetch_sub(1, std::memory_order_relaxed);
        bump(refused_);
        // A 503 in plain text means nothing to a TLS client, and a handshake to say it
        // costs what the refusal saves: an HTTPS connection just closes (which also takes
        // its socket out of the poller: one left there kept the loop from ever ending).
        if (tls) {
            conn->close();
        } else {
            conn->refuse();
        }
        return;
    }
    connections_.insert(conn.get());
    // The plain listener beside HTTPS either redirects every request to the HTTPS port or
    // serves the app (tls_config::http).
    const bool redirect = plain && shared_.settings.tls->http == tern::plain_http::redirect;
    conn->start(tls, redirect ? shared_.https_port : std::uint16_t{0});
}

void worker::take_queued(listener& l) {
    // Closing a listening socket resets the connections still in its accept queue: their
    // handshake is done, so the client may have sent its request already. This worker's own
    // SO_REUSEPORT socket has nobody to hand them to, so they are accepted now and served
    // with the drain (their answers close). A socket made elsewhere keeps its queue for the
    // process that serves it next.
    if (l.adopted || !l.acceptor.is_open()) return;
    std::error_code ec;
    l.acceptor.non_blocking(true, ec);
    for (std::size_t i = 0; i < max_queued_at_stop && !ec; ++i) {
        asio::ip::tcp::socket socket(io_context_);
        l.acceptor.accept(socket, ec);
        if (!ec) accepted(l.plain, std::move(socket));
    }
}

void worker::accept(listener& l) {
    l.acceptor.async_accept([this, &l](std::error_code ec, asio::ip::tcp::socket socket) {
        // On io_uring (TERN_IO_URING) the kernel completes an accept while the loop is busy:
        // one that completed before a stop closed the listener is a connection taken from
        // the queue, served with the drain like take_queued's.
        if (!ec && socket.is_open()) {
            hand_out(l, std::move(socket));
        }
        if (ec == asio::error::operation_aborted || !l.acceptor.is_open()) return;
        if (ec) {
            // EMFILE, ENFILE, ENOBUFS: the listener is fine but this process is out of a
            // resource. Retrying at once would spin; wait for connections to close.
            l.retry.expires_after(std::chrono::milliseconds(50));
            l.retry.async_wait([this, &l](std::error_code wait_ec) {
                if (!wait_ec && l.acceptor.is_open()) accept(l);
            });
            return;
        }
        accept(l);
    });
}

void worker::stop() {
    if (draining_) return;
    draining_ = true;
    std::error_code ignored;
    for (auto* l : {&main_, &plain_}) {
        take_queued(*l);
        l->acceptor.close(ignored);
        cancel_waits(l->retry);
    }
    // Copy: closing a connection removes it from the list.
    const std::vector<transport*> open(connections_.begin(), connections_.end());
    for (auto* c : open) c->stop_when_idle();
    if (datagram_protocol_) {
        // HTTP/3 (docs/http3.md): work not started is answered; the answers under way go on
        // until they are out (polled), then every connection is closed and the socket.
        datagram_protocol_->on_stop();
        poll_datagrams();
    }
    if (connections_.empty() && expected_posts_ == 0 && !datagram_protocol_) {
        report_drained();
        return;
    }
    drain_timer_.expires_after(shared_.settings.timeouts.drain);
    drain_timer_.async_wait([this](std::error_code) {
        const std::vector<transport*> left(connections_.begin(), connections_.end());
        for (auto* c : left) c->close();
        end_datagrams();
        // The closes above checked while HTTP/3 was still up: checked again now, or the
        // wait for messages is never cancelled and the loop (and stop()) never ends.
        check_drained();
        // A blocking handler still running now is not waited for: it cannot be
        // interrupted, and this loop runs on until its answer has come back (into nothing).
        report_drained();
    });
}

}  // namespace tern::detail

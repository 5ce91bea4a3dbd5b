#pragma once
// One request on a stream of a multiplexed connection (HTTP/2, HTTP/3): what both protocols
// do the same. The head is mapped and checked (a refusal answered at once), the body kept in
// memory or spooled to a file within its limits, the handler run on the complete request,
// and the answer-later port: deferred work taken back or resumed on the loop, held answers
// finished. A request body a route reads itself (tern::streamed_body) is handed to its
// reader piece by piece instead, each piece's flow-control credit given back only when the
// reader asks again (stream_exchange_body.cpp). A protocol's stream derives from it and adds
// the framing: how an answer is submitted and its body sent, resets, deadlines, credit
// (src/h2/stream.hpp, src/h3/stream.hpp).

#include "http/exchange_port.hpp"
#include "http/field_section.hpp"
#include "http/request.hpp"
#include "http/request_handler.hpp"
#include "http/response.hpp"

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace tern::detail {

class protocol_host;
class spooled_body;

/// What one finished exchange leaves to the next of its connection: its request's and its
/// response's buffers, emptied, their capacity kept, as an HTTP/1.1 connection keeps its one
/// request and response from one request to the next (an HTTP/2 connection keeps a few:
/// h2/connection). Each is bounded (spare_capacity) so that a large body does not stay.
struct exchange_buffers {
    std::string text;                         // the request's storage (its head's text)
    std::vector<request_head::field> fields;  // the head's fields
    std::vector<header_field> headers;        // the request's fields
    std::vector<std::pair<std::string, std::string>> response_fields;
    std::string content_type;
    std::string body;  // the response's body in memory
    /// The largest string kept (a body past it is let go).
    static constexpr std::size_t spare_capacity = 4 * 1024;
};

class stream_exchange : public answer_later,
                        public body_port,
                        public std::enable_shared_from_this<stream_exchange> {
public:
    /// Hands this exchange's buffers, emptied, to `spare`: once its stream has closed and
    /// nothing but its connection holds it (nothing will read its request or response again).
    void give_buffers(exchange_buffers& spare) noexcept;
    /// Takes `spare`'s buffers as this exchange's own: before its first field.
    void take_buffers(exchange_buffers& spare) noexcept;

    stream_exchange(const stream_exchange&) = delete;
    stream_exchange& operator=(const stream_exchange&) = delete;

    /// The request has just become complete (by its head or its end): true once; the
    /// connection then queues it for `run`, after the protocol library has returned.
    bool take_ready() noexcept { return std::exchange(ready_, false); }
    /// Runs the handler on the complete request.
    void run();
    bool request_ended() const noexcept { return request_ended_; }

    /// What of the work begun for an exchange may still run after its stream closed: the
    /// exchange itself while something else holds it (a deferred job's resume), a held
    /// answer's link and a streamed body's source while the application holds them. Weak:
    /// the application lets go of them from any thread; read on the loop.
    class work_left {
    public:
        /// Nothing of it is held any more.
        bool ended() const noexcept {
            return exchange_.expired() && held_.expired() && source_.expired();
        }

    private:
        friend class stream_exchange;
        std::weak_ptr<const void> exchange_, held_, source_;
    };
    /// This exchange's work, taken once its stream has closed (after release()).
    work_left work() const;

    // ---- the request body in memory (http/body_memory.hpp) ------------------------------
    /// The request's body is still arriving: its head is read, its end is not, and it is
    /// neither refused nor answered.
    bool receiving() const noexcept {
        return head_done_ && !request_ended_ && !refused_ && !answered_ && !streamed_;
    }
    /// Bytes of the request body held in memory (none once it spools).
    std::uint64_t body_in_memory() const noexcept { return req_.body.size(); }
    /// Body bytes whose flow-control window the stream has not given back yet.
    std::uint64_t window_owed() const noexcept { return window_owed_; }

    // ---- a streamed request body (tern::streamed_body; stream_exchange_body.cpp) ----------
    /// The route reads the request's body itself, piece by piece: its handler ran on the
    /// head. Its bytes are held (body_held) and their credit given back as the reader asks
    /// again; they count neither in max_body_memory nor in the spool quotas.
    bool streams_body() const noexcept { return streamed_; }
    /// Bytes of a streamed body the stream holds: arrived and not handed out, and the piece
    /// handed out (valid until the reader's next ask). At most one stream window.
    std::uint64_t body_held() const noexcept { return arrived_.size() + handed_.size(); }
    /// A streamed body's reader waits for the client: the body's idle deadline runs.
    bool body_awaited() const noexcept {
        return streamed_ && body_sink_ && !feed_posted_ && arrived_.empty() && !request_ended_ &&
               !refused_ && !answered_;
    }
    /// body_port: the reader asks for the next piece (told later, by a posted feed).
    void ask(std::shared_ptr<body_sink> sink) override;

protected:
    stream_exchange(protocol_host& host, std::shared_ptr<loop_door> door,
                    const head_limits& limits);
    ~stream_exchange();

    // ---- the request, as the protocol decodes it ------------------------------------------
    /// A field of the header section (of the trailers when `trailer`).
    void add_field(std::string_view name, std::string_view value, bool trailer);
    /// The header section is complete (once: a later one is the trailers); `ended`: the
    /// request has no body. `major` is the HTTP version; `secure` and `client_subject` what
    /// the connection knows of its TLS. A head that fails a limit or does not map is
    /// refused; one that declares a body over its route's limit is refused with 413.
    void take_head(bool ended, int major, bool secure, std::string_view client_subject);
    /// Body bytes: kept, spooled past `limits.spool_body_above`, or refused (413 past the
    /// route's limit; 503 or 500 when the spool cannot take them). Dropped once answered.
    void take_body(std::string_view data);
    /// The request's end, after its body or trailers (a second report is ignored).
    void take_end();
    /// Answers the request with a refusal (`status`, `message` as handle_failure takes it);
    /// the rest of its body is dropped.
    void refuse(int status, std::string_view message = {});

    // ---- what the protocol's stream provides ------------------------------------------------
    /// The stream can still be answered: its connection is there and it is not closed.
    virtual bool live() const noexcept = 0;
    virtual std::string_view remote_ip() const noexcept = 0;
    /// Counts one request answered (for the server's counters).
    virtual void count_request() noexcept = 0;
    /// Sends res_ as the answer (once: answered_ is set by it).
    virtual void submit() = 0;
    /// After a refusal was submitted.
    virtual void after_refusal() {}
    /// The request asks for 100 Continue before its body.
    virtual void send_continue() {}
    /// A body is about to be spooled: one more file. False when the protocol refused the
    /// stream instead (it reset it unprocessed).
    virtual bool admit_spool() { return true; }
    /// Whether the connection's own bound lets the spool grow to `after` bytes.
    virtual bool may_spool(std::uint64_t /*after*/) { return true; }
    /// A streamed body's reader asked again after taking `n` bytes: their flow-control
    /// credit goes back to the client, which may send that much more.
    virtual void give_body_credit(std::uint64_t /*n*/) {}
    /// A streamed body's reader waits for the client from now (its idle deadline starts).
    virtual void on_body_awaited() {}
    /// The 100 Continue a streamed body's first ask sends, outside the protocol library.
    virtual void send_continue_now() { send_continue(); }

    // ---- for the protocol's stream ---------------------------------------------------------
    /// Whether the exchange holds a descriptor: a file body, or a request body spooled.
    bool holds_descriptor() const noexcept { return res_.file.file || spool_ || req_.spooled; }
    /// Bytes of spool the request body holds (its declared length once spooling).
    std::uint64_t spool_reserved() const noexcept;
    /// Whether res_ has a body to send (not for HEAD, 1xx, 204, 304; not when empty).
    bool answer_has_body() const noexcept;
    /// Takes res_'s source: attached to this stream as its port and returned when `keep`,
    /// else told at once that nothing is pulled (a HEAD, a 204) and null returned.
    std::shared_ptr<body_source> take_source(bool keep);
    /// The stream closed: work not started never runs, a held answer is told that nothing
    /// more reaches the client, the spool is given back.
    void release() noexcept;
    /// The server stops: deferred work that has not started is answered now (503).
    void stop_deferred() noexcept;
    /// A streamed body's reading ends with `why` (the client reset the stream): the reader
    /// waiting, or its next ask, hears it.
    void end_body_reading(body_stop why) noexcept;
    /// A streamed body's reading ends with `why`, and tern answers `status` in the handler's
    /// place (413 past the limit, 408 for an idle client): its late answer is refused.
    void fail_body(body_stop why, int status);
    /// The answer went out: a streamed body's reader waiting hears that nothing more of the
    /// body is read (client_left).
    void body_answered() noexcept {
        if (body_sink_) post_feed();
    }
    /// The stream lets go of its streamed body's `source` as it closes: work left until the
    /// application lets go of it too (work()).
    void leave(const std::shared_ptr<body_source>& source) noexcept { left_source_ = source; }

    // answer_later / exchange_port: `wake` is the protocol's.
    resume_fn defer(withdraw_fn withdraw) override;
    std::shared_ptr<loop_door> door() override;
    void hold(std::shared_ptr<held_link> link) override;
    void finish(response&& res) override;

    protocol_host* host_;  // the worker: outlives the stream's posted resumes
    std::shared_ptr<loop_door> door_;
    request_head head_;
    request req_;
    response res_;

    bool head_done_ = false;
    bool request_ended_ = false;
    bool refused_ = false;  // answered by a refusal: further body bytes are dropped
    bool answered_ = false;
    bool deferred_ = false;  // deferred (a blocking handler) or held: answered later
    std::shared_ptr<spooled_body> spool_;
    // Body bytes kept in memory whose window the connection holds back (body_memory.hpp).
    std::uint64_t window_owed_ = 0;

private:
    bool spool(std::string_view data);
    // A streamed body (stream_exchange_body.cpp).
    void stream_body(std::string_view data);
    void post_feed();
    void feed();
    void resume(const std::function<void()>& on_loop) noexcept;
    bool take_back(bool answer_now) noexcept;

    bool ready_ = false;
    bool ran_ = false;  // its handler ran (the request is counted)
    std::size_t body_limit_ = 0;
    std::uint64_t declared_ = 0;  // the request's Content-Length, 0 when it has none
    std::uint64_t body_bytes_ = 0;
    withdraw_fn withdraw_;
    std::shared_ptr<held_link> held_;
    // What release() and leave() let go of, while the application may still hold it.
    std::weak_ptr<const void> left_held_, left_source_;

    // A streamed body: its bytes arrived and not handed out, the piece handed out, the
    // reader waiting for the next piece, and why the reading ended early.
    bool streamed_ = false;
    bool continue_wanted_ = false;  // 100 Continue goes out on the first ask
    bool feed_posted_ = false;
    std::optional<body_stop> body_failure_;
    std::shared_ptr<body_sink> body_sink_;
    std::string arrived_;
    std::string handed_;
};

}  // namespace tern::detail

#pragma once
// The one call the network layer makes upward: answer a complete request.

#include "http/exchange_port.hpp"
#include "http/parser.hpp"
#include "http/request.hpp"
#include "http/response.hpp"

#include <functional>
#include <memory>
#include <string_view>

namespace tern::detail {

/// Given to request_handler::handle by the connection: lets the application finish a
/// request on another thread (a blocking handler) instead of before handle() returns; as an
/// exchange_port, it also takes held responses and streamed bodies.
class answer_later : public exchange_port {
public:
    /// What the application calls once, from any thread, when it is done: `on_connection`
    /// then runs on the connection's thread, before the response is written.
    using resume_fn = std::function<void(std::function<void()> on_connection)>;
    /// What the connection may call, on its own thread and at most once, while it waits: it
    /// takes the work back if it has not started. Then it returns what to run on the
    /// connection, in place of the resume (which never comes), to answer the request now;
    /// when the work has started it returns an empty function (and the resume comes).
    using withdraw_fn = std::function<std::function<void()>()>;

    /// Called during handle(), on the connection's thread: the connection reads and answers
    /// nothing more until the returned function is called, or until it withdraws the work
    /// (the client left, the server stops). The request and the response passed to handle()
    /// stay valid and untouched by the connection until then.
    virtual resume_fn defer(withdraw_fn withdraw) = 0;

protected:
    ~answer_later() = default;
};

/// What the application keeps per event loop (scratch buffers, open static roots): made by
/// `request_handler::make_loop_state` when a worker is made, owned by the worker (so it ends
/// with the server, never shared between threads or apps), handed back with every request
/// on that loop. Loop thread only.
class loop_state {
public:
    virtual ~loop_state() = default;
};

/// Implemented by the application layer. Called on the connection's own thread, once per
/// complete request, in order; must fill `res` (or take `later.defer()`) and must not throw.
/// As a body_planner it gives each request with a body its route's body limit.
class request_handler : public body_planner {
public:
    virtual void handle(request& req, response& res, std::string_view remote_ip,
                        answer_later& later, loop_state& state) noexcept = 0;
    /// The state one worker's requests share (see loop_state); called once per worker, on
    /// the thread that makes the server.
    virtual std::unique_ptr<loop_state> make_loop_state() = 0;
    /// A stop has begun (from any thread, once per server, before any loop hears of it):
    /// readiness answers 503 from now on, while requests are still served for the grace
    /// period, and the application's own work on the loops starts no more.
    virtual void stop_began() noexcept {}
    /// Fills `res` for a request the connection refuses with `status` (a limit, a parse
    /// error, a timeout; 400..599). `req` holds the request head when it was complete,
    /// else it is empty. `message` says why when the status's reason phrase would not
    /// (failure_message in http/error.hpp); empty: the reason phrase. The connection closes
    /// after writing `res`.
    virtual void handle_failure(request& req, int status, std::string_view message, response& res,
                                std::string_view remote_ip, loop_state& state) noexcept = 0;

protected:
    ~request_handler() = default;
};

}  // namespace tern::detail

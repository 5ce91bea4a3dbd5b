#pragma once
// The live example's routes and the one timer thread behind its late answers.
// main.cpp runs them on a port (with its command line's TLS and compression);
// tests/examples/test_live.cpp runs them under the test kit (tern::testing). The routes are
// listed in main.cpp's header comment.

#include <tern/tern.hpp>

#include <memory>

namespace live {

/// What the routes share while the app serves: one timer thread for the answers of /later,
/// and the SSE clients with the tick each sees next (the ticks themselves, every 100 ms, are
/// a task on one of the app's loops: `app.every`, set by add_routes). Made before the app, so
/// that it outlives the app's serving.
class services {
public:
    /// Starts the timer thread.
    services();
    /// stop().
    ~services();
    services(const services&) = delete;
    services& operator=(const services&) = delete;

    /// Ends the timer thread; late answers still queued are dropped (a deferred reply dropped
    /// so answers 500, if its server still runs).
    void stop();

    struct state;  // live_app.cpp
    /// For add_routes.
    state& get() noexcept { return *state_; }

private:
    std::unique_ptr<state> state_;
};

/// Sets `app` up as the live example over `s`: the page (public/), GET /events, /stream,
/// /later, the /ws echo and POST /upload.
void add_routes(tern::app& app, services& s);

}  // namespace live

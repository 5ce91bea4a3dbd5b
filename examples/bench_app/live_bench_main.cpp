// The server bench/live.py and bench/ws.py measure: examples/live's /later and /stream, an
// SSE endpoint whose clients all join one tern::sse_clients set and a POST that broadcasts to
// it, and WebSocket echo and broadcast endpoints.
//
//   GET  /later?ms=M               "later M" after M ms, from one timer thread (no thread
//                                  is held per waiting request)
//   GET  /stream?n=N&size=S        N pieces of S bytes ('a'..'z' repeating), produced only as
//                                  fast as the client reads them
//   GET  /feed                     Server-Sent Events: the client joins the broadcast set
//   POST /broadcast?n=K&size=B     K events of B bytes ('x') broadcast to the set, on the
//                                  request's own thread (the worker's event loop); answers
//                                  one line per event: how many clients it was queued for
//   GET  /ws/echo                  WebSocket (bench/ws.py): every message echoed back
//   GET  /ws/feed                  WebSocket: the connection joins the broadcast set
//   GET  /ws/control               WebSocket: a text message "broadcast B" broadcasts one
//                                  text message of B bytes ('x') to /ws/feed's set
//   GET  /                         "Hello, World!" (what bench/lib waits for)
//
//   bench_live_app [--threads N] [port]      (defaults: 1 thread, port 8080; 127.0.0.1)

#include <tern/tern.hpp>

#include <charconv>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>

namespace {

using clock_type = std::chrono::steady_clock;

template <class T>
bool parse_number(std::string_view arg, T& out) {
    const auto [end, ec] = std::from_chars(arg.data(), arg.data() + arg.size(), out);
    return ec == std::errc{} && end == arg.data() + arg.size();
}

long number_param(tern::context& ctx, std::string_view name, long fallback, long max) {
    const long value = ctx.query_param<long>(name, fallback);
    if (value < 0 || value > max) {
        throw tern::http_error(400, std::string(name) + " must be in 0.." + std::to_string(max));
    }
    return value;
}

// One thread runs every delayed completion, as in examples/live: a waiting request is a
// queue entry, not a thread.
class timer_thread {
public:
    timer_thread() : thread_([this] { run(); }) {}
    ~timer_thread() {
        {
            std::lock_guard lock(mutex_);
            stopping_ = true;
        }
        wake_.notify_one();
        thread_.join();
    }
    timer_thread(const timer_thread&) = delete;
    timer_thread& operator=(const timer_thread&) = delete;

    void at(clock_type::time_point when, std::function<void()> fn) {
        bool first = false;
        {
            std::lock_guard lock(mutex_);
            const auto added = due_.emplace(when, std::move(fn));
            first = added == due_.begin();
        }
        // Only a new first entry changes how long the thread sleeps: waking it for every
        // request would cost a context switch each (10,000 waiting requests, 10,000 wakes).
        if (first) wake_.notify_one();
    }

private:
    void run() {
        std::unique_lock lock(mutex_);
        while (!stopping_) {
            if (due_.empty()) {
                wake_.wait(lock);
            } else if (clock_type::now() < due_.begin()->first) {
                wake_.wait_until(lock, due_.begin()->first);
            } else {
                auto fn = std::move(due_.begin()->second);
                due_.erase(due_.begin());
                lock.unlock();
                fn();
                lock.lock();
            }
        }
    }

    std::mutex mutex_;
    std::condition_variable wake_;
    std::multimap<clock_type::time_point, std::function<void()>> due_;
    bool stopping_ = false;
    std::thread thread_;  // last: starts after the members it uses
};

// examples/live's producer: a piece is made only when the stream takes it.
struct producer : std::enable_shared_from_this<producer> {
    tern::response_stream out;
    long pieces = 0;
    std::size_t size = 0;
    long done = 0;
    std::size_t offset = 0;

    void pump() {
        while (done < pieces) {
            std::string piece(size, '\0');
            for (auto& c : piece) c = static_cast<char>('a' + offset++ % 26);
            ++done;
            if (!out.write(piece)) return;  // on_writable calls pump again
        }
        out.end();
    }
};

}  // namespace

int main(int argc, char** argv) {
    unsigned threads = 1;
    std::uint16_t port = 8080;
    for (int i = 1; i < argc; ++i) {
        const std::string_view arg = argv[i];
        const bool ok = (arg == "--threads" && i + 1 < argc) ? parse_number(argv[++i], threads)
                                                             : parse_number(arg, port);
        if (!ok) {
            std::fprintf(stderr, "usage: bench_live_app [--threads N] [port]\n");
            return 2;
        }
    }

    timer_thread timers;
    tern::sse_clients feed;

    tern::app app;
    app.threads(threads);
    // The default (10,000) would answer the 10,001st connection 503: bench/live.py holds
    // 10,000 SSE clients and then connects once more to broadcast.
    app.max_concurrent_connections(100'000);

    app.get("/", [](tern::context& ctx) { ctx.text("Hello, World!"); });

    app.get("/later", [&timers](tern::context& ctx) {
        const long ms = number_param(ctx, "ms", 0, 600'000);
        auto reply = ctx.defer();
        timers.at(clock_type::now() + std::chrono::milliseconds(ms), [reply, ms] {
            reply.complete([ms](tern::context& c) { c.text("later " + std::to_string(ms)); });
        });
    });

    app.get("/stream", [](tern::context& ctx) {
        auto p = std::make_shared<producer>();
        p->pieces = number_param(ctx, "n", 10, 1'000'000'000);
        p->size = static_cast<std::size_t>(number_param(ctx, "size", 1024, 1024 * 1024));
        ctx.content_type("application/octet-stream");
        p->out = ctx.stream();
        p->out.on_writable([weak = std::weak_ptr<producer>(p)] {
            if (auto held = weak.lock()) held->pump();
        });
        p->out.on_close([p] {});  // keeps the producer alive as long as the stream
        p->pump();
    });

    app.sse("/feed", [&feed](tern::context&, tern::sse_client client) { feed.add(client); });

    app.post("/broadcast", [&feed](tern::context& ctx) {
        const long n = number_param(ctx, "n", 1, 100'000);
        const auto size = static_cast<std::size_t>(number_param(ctx, "size", 64, 1024 * 1024));
        const std::string data(size, 'x');
        std::string reached;
        for (long i = 0; i < n; ++i) reached += std::to_string(feed.broadcast(data)) + "\n";
        ctx.text(reached);
    });

    tern::ws_clients ws_feed;
    app.ws("/ws/echo", [](tern::ws_handlers& ws) {
        ws.on_message([](tern::ws_connection& c, std::string_view text) { c.send(text); });
        ws.on_binary([](tern::ws_connection& c, std::string_view data) { c.send_binary(data); });
    });
    app.ws("/ws/feed", [&ws_feed](tern::ws_handlers& ws) {
        ws.on_connect([&ws_feed](tern::ws_connection& c) { ws_feed.add(c); });
        ws.on_close(
            [&ws_feed](tern::ws_connection& c, int, std::string_view) { ws_feed.remove(c); });
    });
    app.ws("/ws/control", [&ws_feed](tern::ws_handlers& ws) {
        ws.on_message([&ws_feed](tern::ws_connection&, std::string_view text) {
            constexpr std::string_view verb = "broadcast ";
            std::size_t size = 0;
            if (text.substr(0, verb.size()) != verb ||
                !parse_number(text.substr(verb.size()), size) || size > 1024 * 1024) {
                return;
            }
            ws_feed.broadcast(std::string(size, 'x'));
        });
    });

    std::printf("bench_live_app: listening on http://127.0.0.1:%u/ with %u thread(s)\n", port,
                threads);
    std::fflush(stdout);
    app.listen("127.0.0.1", port);
    return 0;
}

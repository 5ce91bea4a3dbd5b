// The live example's routes (live_app.hpp); main.cpp has the list of them and the command
// line.

#include "live_app.hpp"

#include <openssl/evp.h>
#include <unistd.h>

#include <charconv>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace {

using clock_type = std::chrono::steady_clock;

// One thread for the late answers of /later: a queue of functions by due time. A request
// waiting in it costs an entry, not a thread.
class timer_thread {
public:
    timer_thread() : thread_([this] { run(); }) {}
    ~timer_thread() { stop(); }

    // Ends the thread; what is still queued is dropped (a deferred reply dropped so
    // answers 500, if its server still runs).
    void stop() {
        {
            std::lock_guard lock(mutex_);
            stopping_ = true;
        }
        wake_.notify_one();
        if (thread_.joinable()) thread_.join();
        due_.clear();
    }
    timer_thread(const timer_thread&) = delete;
    timer_thread& operator=(const timer_thread&) = delete;

    void at(clock_type::time_point when, std::function<void()> fn) {
        bool first = false;
        {
            std::lock_guard lock(mutex_);
            first = due_.empty() || when < due_.begin()->first;
            due_.emplace(when, std::move(fn));
        }
        // Only a new earliest entry changes how long the thread sleeps (a wake-up per
        // request would cost a context switch each).
        if (first) wake_.notify_one();
    }

private:
    void run() {
        std::unique_lock lock(mutex_);
        while (!stopping_) {
            if (due_.empty()) {
                wake_.wait(lock);
                continue;
            }
            const auto next = due_.begin()->first;
            if (clock_type::now() < next) {
                wake_.wait_until(lock, next);
                continue;
            }
            auto fn = std::move(due_.begin()->second);
            due_.erase(due_.begin());
            lock.unlock();
            fn();
            lock.lock();
        }
    }

    std::mutex mutex_;
    std::condition_variable wake_;
    std::multimap<clock_type::time_point, std::function<void()>> due_;
    bool stopping_ = false;
    std::thread thread_;  // last: starts after the members it uses
};

// The tick after `id`: id + 1, or 1 when that is not a count this example gives (negative,
// or the counter's maximum, whose + 1 would overflow: undefined behaviour on a signed type).
std::int64_t tick_after(std::int64_t id) {
    return id >= 0 && id < std::numeric_limits<std::int64_t>::max() ? id + 1 : 1;
}

// The tick a client resumes at: after its Last-Event-ID when that is a count of ours (all
// digits, in range), else 1. The header is the client's: anything may be in it.
std::int64_t resume_tick(std::string_view last_event_id) {
    std::int64_t k = 0;
    const auto* const first = last_event_id.data();
    const auto* const last = first + last_event_id.size();
    const auto [end, ec] = std::from_chars(first, last, k);
    if (last_event_id.empty() || ec != std::errc{} || end != last) return 1;
    return tick_after(k);
}

// The SSE clients and the tick each one sees next.
class ticker {
public:
    void add(tern::sse_client client) {
        const auto next = resume_tick(client.last_event_id());
        std::lock_guard lock(mutex_);
        clients_.push_back({std::move(client), next});
    }

    // Sends every client its next tick; forgets the ones that left.
    void tick() {
        std::lock_guard lock(mutex_);
        std::erase_if(clients_, [](entry& e) {
            const auto n = std::to_string(e.next);
            e.next = tick_after(e.next);
            e.client.send("tick " + n, {}, n);
            return e.client.closed();
        });
    }

private:
    struct entry {
        tern::sse_client client;
        std::int64_t next;
    };
    std::mutex mutex_;
    std::vector<entry> clients_;
};

// Streams `pieces` pieces of `size` bytes, writing only while the stream takes them.
struct producer : std::enable_shared_from_this<producer> {
    tern::response_stream out;
    long pieces;
    std::size_t size;
    long done = 0;
    std::size_t offset = 0;  // bytes sent so far, for the 'a'..'z' pattern

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

// SHA-256 of `size` bytes of `fd` from offset 0, read in 1 MiB pieces (the whole body is
// never in memory at once), or of `bytes` when there is no file.
std::string sha256_hex(int fd, std::string_view bytes) {
    std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> md(EVP_MD_CTX_new(), EVP_MD_CTX_free);
    if (!md || EVP_DigestInit_ex(md.get(), EVP_sha256(), nullptr) != 1) {
        throw std::runtime_error("sha256: cannot start");
    }
    if (fd < 0) {
        EVP_DigestUpdate(md.get(), bytes.data(), bytes.size());
    } else {
        // lseek and read, which Windows's C runtime has too (pread it has not).
        std::string piece(1 << 20, '\0');
        if (::lseek(fd, 0, SEEK_SET) != 0) throw std::runtime_error("sha256: cannot seek");
        for (;;) {
            const auto n = ::read(fd, piece.data(), static_cast<unsigned>(piece.size()));
            if (n < 0) throw std::runtime_error("sha256: cannot read the body");
            if (n == 0) break;
            EVP_DigestUpdate(md.get(), piece.data(), static_cast<std::size_t>(n));
        }
    }
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int length = 0;
    EVP_DigestFinal_ex(md.get(), digest, &length);
    static constexpr char hex[] = "0123456789abcdef";
    std::string out;
    for (unsigned int i = 0; i < length; ++i) {
        out += hex[digest[i] >> 4];
        out += hex[digest[i] & 0xf];
    }
    return out;
}

long number_param(tern::context& ctx, std::string_view name, long fallback, long max) {
    const long value = ctx.query_param<long>(name, fallback);
    if (value < 0 || value > max) {
        throw tern::http_error(400, std::string(name) + " must be in 0.." + std::to_string(max));
    }
    return value;
}

}  // namespace

namespace live {

struct services::state {
    ticker events;
    timer_thread timers;  // last: its thread runs the late answers, so it stops first
};

services::services() : state_(std::make_unique<state>()) {}

services::~services() { stop(); }

void services::stop() { state_->timers.stop(); }

void add_routes(tern::app& app, services& s) {
    timer_thread& timers = s.get().timers;
    ticker& events = s.get().events;

    app.static_files(LIVE_PUBLIC_DIR);

    app.sse("/events",
            [&](tern::context&, tern::sse_client client) { events.add(std::move(client)); });
    // The ticks: one task on one of the app's loops for every client, not a thread or a
    // timer per client; it ends with the app's stop.
    app.every(std::chrono::milliseconds(100), [&events] { events.tick(); });

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

    app.ws("/ws", [](tern::ws_handlers& ws) {
        ws.on_message([](tern::ws_connection& c, std::string_view text) { c.send(text); });
        ws.on_binary([](tern::ws_connection& c, std::string_view data) { c.send_binary(data); });
    });

    app.get("/later", [&](tern::context& ctx) {
        const long ms = number_param(ctx, "ms", 0, 600'000);
        auto reply = ctx.defer();
        timers.at(clock_type::now() + std::chrono::milliseconds(ms), [reply, ms] {
            reply.complete([ms](tern::context& c) { c.text("later " + std::to_string(ms)); });
        });
    });

    // Up to 1 GiB: bodies over config::spool_body_above (1 MiB) go to a temporary file as
    // they arrive; the hash is computed on the blocking pool, not on the event loop.
    app.post("/upload",
             tern::body_limit(std::size_t{1} << 30, [](tern::context& ctx) -> tern::task {
                 const int fd = ctx.body_fd();
                 const auto bytes = ctx.body();
                 const std::string digest =
                     co_await tern::on_blocking_pool([fd, bytes] { return sha256_hex(fd, bytes); });
                 ctx.json_text("{\"bytes\": " + std::to_string(bytes.size()) + ", \"sha256\": \"" +
                               digest + "\"}");
             }));
}

}  // namespace live

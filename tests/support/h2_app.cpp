// The server of the HTTP/2 client tests (tests/clients/h2_*.py): an app with small limits
// and short deadlines, so that each limit and deadline can be reached quickly over a real
// socket, and a route for each way a response can be made (immediate, blocking, deferred,
// coroutine, streamed, SSE, a file).
//
//   h2_app PORT [--cert FILE --key FILE] [--no-http2] [--access-log FILE] [--grace MS]
//          [--spool-dir DIR] [--spool-quota BYTES] [--h2-spool BYTES] [--streams N]
//
// Prints "h2_app: listening on PORT" before it binds (the tests wait for the port to
// answer); SIGTERM stops it (drain 2 s), after a grace period of MS milliseconds with
// `--grace` (app.health: GET /ready answers 503 meanwhile).

#include <tern/tern.hpp>

#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <string_view>
#include <thread>

namespace {

long number(tern::context& ctx, std::string_view name, long fallback) {
    return ctx.query_param<long>(name, fallback);
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr,
                     "usage: h2_app PORT [--cert FILE --key FILE] [--no-http2] "
                     "[--access-log FILE] [--grace MS] [--spool-dir DIR] [--spool-quota BYTES] "
                     "[--h2-spool BYTES] [--streams N]\n");
        return 2;
    }
    const auto port = static_cast<std::uint16_t>(std::stoi(argv[1]));
    std::string cert, key, log_file;
    bool http2 = true;
    long grace_ms = 0;
    std::string spool_dir;
    std::uint64_t spool_quota = 0;
    std::uint64_t h2_spool = 0;
    std::uint32_t streams = 10;  // h2_max_concurrent_streams: small, for the tests' floods
    for (int i = 2; i < argc; ++i) {
        const std::string_view arg = argv[i];
        if (arg == "--cert" && i + 1 < argc) cert = argv[++i];
        if (arg == "--key" && i + 1 < argc) key = argv[++i];
        if (arg == "--no-http2") http2 = false;
        if (arg == "--access-log" && i + 1 < argc) log_file = argv[++i];
        if (arg == "--grace" && i + 1 < argc) grace_ms = std::stol(argv[++i]);
        if (arg == "--spool-dir" && i + 1 < argc) spool_dir = argv[++i];
        if (arg == "--spool-quota" && i + 1 < argc) spool_quota = std::stoull(argv[++i]);
        if (arg == "--h2-spool" && i + 1 < argc) h2_spool = std::stoull(argv[++i]);
        if (arg == "--streams" && i + 1 < argc) {
            streams = static_cast<std::uint32_t>(std::stoul(argv[++i]));
        }
    }

    tern::config cfg;
    cfg.threads = 1;
    cfg.http2.enabled = http2;
    cfg.limits.max_header_count = 20;
    cfg.limits.max_header_size = 2048;
    cfg.limits.max_line_size = 1024;
    cfg.limits.max_body_size = 64 * 1024;
    cfg.spool.body_above = 16 * 1024;
    if (!spool_dir.empty()) cfg.spool.directory = spool_dir;
    if (spool_quota != 0) cfg.spool.max_bytes = spool_quota;
    if (h2_spool != 0) cfg.http2.max_spooled_bytes = h2_spool;
    cfg.timeouts.header = std::chrono::milliseconds(1500);
    cfg.timeouts.body_idle = std::chrono::milliseconds(1000);
    cfg.timeouts.keep_alive = std::chrono::milliseconds(3000);
    cfg.timeouts.write = std::chrono::milliseconds(1000);
    cfg.timeouts.drain = std::chrono::milliseconds(2000);
    cfg.streams.sse_keep_alive = std::chrono::milliseconds(300);
    cfg.http2.max_concurrent_streams = streams;
    tern::app app(cfg);

    std::FILE* log = log_file.empty() ? nullptr : std::fopen(log_file.c_str(), "w");
    if (log != nullptr) {
        app.request_logger(tern::access_log([log](std::string_view line) {
            std::fwrite(line.data(), 1, line.size(), log);
            std::fputc('\n', log);
            std::fflush(log);
        }));
    }

    app.get("/", [](tern::context& ctx) { ctx.text("hello h2"); });
    // The server's HTTP/2 counters: "h2_connections h2_requests requests".
    app.get("/stats", [&app](tern::context& ctx) {
        const auto s = app.stats();
        ctx.text(std::to_string(s.h2_connections) + " " + std::to_string(s.h2_requests) + " " +
                 std::to_string(s.requests));
    });
    app.get("/proto", [](tern::context& ctx) {
        ctx.text(std::string(ctx.protocol()) + " " + std::string(ctx.scheme()));
    });
    // The request as the handler sees it: method, path, query, Host, and every field.
    app.get("/fields", [](tern::context& ctx) {
        std::string out = std::string(ctx.method()) + " " + std::string(ctx.path()) + "?" +
                          std::string(ctx.query_string()) + "\n";
        for (const auto& f : ctx.headers()) {
            out += std::string(f.name) + ": " + std::string(f.value) + "\n";
        }
        ctx.text(out);
    });
    app.post("/echo", [](tern::context& ctx) {
        ctx.content_type("application/octet-stream").result(std::string(ctx.body()));
    });
    app.post("/size", [](tern::context& ctx) {
        ctx.text(std::to_string(ctx.body().size()) + (ctx.body_fd() >= 0 ? " spooled" : ""));
    });
    // Up to 8 MiB (over max_body_size): the spool quota's tests.
    app.post(
        "/upload", tern::body_limit(8 << 20, [](tern::context& ctx) {
            ctx.text(std::to_string(ctx.body().size()) + (ctx.body_fd() >= 0 ? " spooled" : ""));
        }));
    // A body of N bytes (default 1 MiB) from memory: more than a flow-control window.
    app.get("/big", [](tern::context& ctx) {
        const auto n = static_cast<std::size_t>(number(ctx, "n", 1 << 20));
        ctx.content_type("application/octet-stream").result(std::string(n, 'x'));
    });
    app.get("/blocking", tern::blocking([](tern::context& ctx) {
                std::this_thread::sleep_for(std::chrono::milliseconds(number(ctx, "ms", 50)));
                ctx.text("blocking done");
            }));
    app.get("/later", [](tern::context& ctx) {
        auto reply = ctx.defer();
        const long ms = number(ctx, "ms", 50);
        std::thread([reply, ms] {
            std::this_thread::sleep_for(std::chrono::milliseconds(ms));
            reply.complete([ms](tern::context& c) { c.text("later " + std::to_string(ms)); });
        }).detach();
    });
    app.get("/sleep", [](tern::context& ctx) -> tern::task {
        co_await tern::sleep_for(std::chrono::milliseconds(number(ctx, "ms", 50)));
        ctx.text("slept");
    });
    // N pieces of SIZE bytes, written as the stream takes them.
    app.get("/stream", [](tern::context& ctx) {
        struct pump : std::enable_shared_from_this<pump> {
            tern::response_stream out;
            long left = 0;
            std::string piece;
            void go() {  // from the handler, then from on_writable
                while (left > 0) {
                    --left;
                    if (!out.write(piece)) return;  // on_writable calls again
                }
                out.end();
            }
        };
        auto p = std::make_shared<pump>();
        p->left = number(ctx, "n", 10);
        p->piece.assign(static_cast<std::size_t>(number(ctx, "size", 1000)), 's');
        ctx.content_type("application/octet-stream");
        p->out = ctx.stream();
        p->out.on_writable([w = std::weak_ptr<pump>(p)] {
            if (auto held = w.lock()) held->go();
        });
        p->out.on_close([p] {});
        p->go();
    });
    // Trailers both ways: the body, then the request's trailers ("name=value;" each), with
    // x-count (how many came) as a response trailer; ?stream=1 streams the answer in two
    // pieces and sets x-last on the stream; ?empty=1 answers with trailers and no body.
    app.post("/trailers", [](tern::context& ctx) {
        std::string out(ctx.body());
        out += '|';
        for (const auto& t : ctx.trailers()) {
            out += std::string(t.name) + "=" + std::string(t.value) + ";";
        }
        ctx.trailer("x-count", std::to_string(ctx.trailers().size()));
        if (ctx.query_param("empty")) return;
        if (!ctx.query_param("stream")) {
            ctx.text(out);
            return;
        }
        auto stream = ctx.stream();
        stream.write(out);
        stream.write(";more");
        stream.trailer("x-last", "stream");
        stream.end();
    });
    // Three events, then the stream stays open (keep-alive comments every 300 ms).
    app.sse("/events", [](tern::context&, tern::sse_client client) {
        for (int i = 1; i <= 3; ++i)
            client.send("event " + std::to_string(i), {}, std::to_string(i));
        client.on_close([client] {});
    });
    app.error(404,
              [](tern::context& ctx) { ctx.text("no such page: " + std::string(ctx.path())); });

    if (grace_ms > 0) {
        tern::health_config health;
        health.grace = std::chrono::milliseconds(grace_ms);
        app.health(health);
    }
    if (!cert.empty()) app.tls(cert, key);
    std::printf("h2_app: listening on %u\n", static_cast<unsigned>(port));
    std::fflush(stdout);
    app.listen("127.0.0.1", port);  // SIGTERM stops it
}

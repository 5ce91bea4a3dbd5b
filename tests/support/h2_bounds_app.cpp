// The server of tests/clients/h2_bounds.py: what one HTTP/2 connection may hold (open files,
// unsent response bytes, time on a trickled window). The defaults of tern's HTTP/2 bounds
// (100 concurrent streams among them), one thread, and a write_timeout the test chooses.
//
//   h2_bounds_app PORT --static DIR [--write-timeout MS] [--spool-above BYTES]
//                 [--body-idle MS]
//
// Prints "h2_bounds_app: listening on PORT" before it binds; SIGTERM stops it.

#include <tern/tern.hpp>

#include <chrono>
#include <cstdio>
#include <string>
#include <string_view>

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: h2_bounds_app PORT --static DIR [--write-timeout MS]\n");
        return 2;
    }
    const auto port = static_cast<std::uint16_t>(std::stoi(argv[1]));
    std::string directory;
    long write_timeout_ms = 20'000;
    long spool_above = 1024 * 1024;
    long body_idle_ms = 20'000;
    for (int i = 2; i < argc; ++i) {
        const std::string_view arg = argv[i];
        if (arg == "--static" && i + 1 < argc) directory = argv[++i];
        if (arg == "--write-timeout" && i + 1 < argc) write_timeout_ms = std::stol(argv[++i]);
        if (arg == "--spool-above" && i + 1 < argc) spool_above = std::stol(argv[++i]);
        if (arg == "--body-idle" && i + 1 < argc) body_idle_ms = std::stol(argv[++i]);
    }

    tern::config cfg;
    cfg.threads = 1;
    cfg.timeouts.write = std::chrono::milliseconds(write_timeout_ms);
    cfg.timeouts.drain = std::chrono::milliseconds(1000);
    cfg.timeouts.body_idle = std::chrono::milliseconds(body_idle_ms);
    cfg.spool.body_above = static_cast<std::size_t>(spool_above);
    tern::app app(cfg);

    app.get("/", [](tern::context& ctx) { ctx.text("hello"); });
    // N bytes (default 1 MiB) made by the handler, held in memory until sent.
    app.get("/big", [](tern::context& ctx) {
        const auto n = static_cast<std::size_t>(ctx.query_param<long>("n", 1 << 20));
        ctx.text(std::string(n, 'x'));
    });
    app.post("/size", [](tern::context& ctx) { ctx.text(std::to_string(ctx.body().size())); });
    if (!directory.empty()) {
        tern::static_files_config files;
        files.hosted_path = "/files";
        files.directory = directory;
        app.static_files(files);
    }

    std::printf("h2_bounds_app: listening on %u\n", static_cast<unsigned>(port));
    std::fflush(stdout);
    app.listen("127.0.0.1", port);
}

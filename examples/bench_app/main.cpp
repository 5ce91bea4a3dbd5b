// The server bench/ measures (bench/run.sh): the routes every peer in bench/peers/ also has.
//   GET /            -> 200 text/plain "Hello, World!"
//   POST /login      -> 200 application/json, the JSON body echoed back
//   GET /health      -> 200 application/json {"status":"ok"} (bench/lib/apps.py's health
//                       and users1k workloads)
//   GET /static/...  -> the files under STATIC_DIR (when given and tern serves static files)
//
//   bench_app [port] [threads] [static_dir]   (defaults: 8080, 1; listens on 127.0.0.1)

#include <tern/tern.hpp>

#include <charconv>
#include <cstdio>
#include <string>
#include <string_view>
#include <utility>

namespace {

template <class T>
bool parse_number(std::string_view arg, T& out) {
    const auto [end, ec] = std::from_chars(arg.data(), arg.data() + arg.size(), out);
    return ec == std::errc{} && end == arg.data() + arg.size();
}

}  // namespace

int main(int argc, char** argv) {
    std::uint16_t port = 8080;
    unsigned threads = 1;
    if ((argc > 1 && !parse_number(argv[1], port)) ||
        (argc > 2 && !parse_number(argv[2], threads))) {
        std::fprintf(stderr, "usage: bench_app [port] [threads] [static_dir]\n");
        return 2;
    }

    tern::app app;
    app.threads(threads).max_concurrent_connections(100'000);  // bench/ holds 10,000 idle ones
    if (argc > 3) {
        tern::static_files_config files;
        files.hosted_path = "/static";
        files.directory = argv[3];
        app.static_files(std::move(files));
    }

    app.get("/", [](tern::context& ctx) { ctx.text("Hello, World!"); });
    app.get("/health", [](tern::context& ctx) {
        ctx.content_type("application/json").result(R"({"status":"ok"})");
    });
    app.post("/login", [](tern::context& ctx) {
        ctx.content_type("application/json").result(std::string(ctx.body()));
    });

    std::printf("bench_app: listening on http://127.0.0.1:%u/ with %u thread(s)\n", port, threads);
    std::fflush(stdout);
    app.listen("127.0.0.1", port);
    return 0;
}

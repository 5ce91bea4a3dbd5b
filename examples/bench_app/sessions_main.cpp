// bench/session-flood.py's server: sessions with the default settings (docs/sessions.md,
// "Under a flood").
//   GET /            -> "Hello, World!" (the readiness probe)
//   POST /login      -> a log-in: regenerate(), then user=alice in the session
//   GET /me          -> the session's user, or "anonymous"
//   POST /visit      -> counts visits in the session (a new session for a request without
//                       a cookie: what a flood hits)
//
//   bench_sessions_app [port]   (default 8080; one thread; listens on 127.0.0.1)

#include <tern/tern.hpp>

#include <charconv>
#include <cstdio>
#include <string>
#include <string_view>

int main(int argc, char** argv) {
    std::uint16_t port = 8080;
    if (argc > 1) {
        const std::string_view arg = argv[1];
        const auto [end, ec] = std::from_chars(arg.data(), arg.data() + arg.size(), port);
        if (ec != std::errc{} || end != arg.data() + arg.size()) {
            std::fprintf(stderr, "usage: bench_sessions_app [port]\n");
            return 2;
        }
    }
    tern::app app;
    app.threads(1).sessions();
    app.get("/", [](tern::context& ctx) { ctx.text("Hello, World!"); });
    app.post("/login", [](tern::context& ctx) {
        auto& s = ctx.session();
        s.regenerate();
        s.set("user", "alice");
        ctx.text("welcome");
    });
    app.get("/me", [](tern::context& ctx) { ctx.text(ctx.session().get("user", "anonymous")); });
    app.post("/visit", [](tern::context& ctx) {
        auto& s = ctx.session();
        s.set("visits", std::to_string(std::stoi(s.get("visits", "0")) + 1));
        ctx.text(s.get("visits", "0"));
    });
    std::printf("bench_sessions_app: listening on http://127.0.0.1:%u/\n", port);
    std::fflush(stdout);
    app.listen("127.0.0.1", port);
    return 0;
}

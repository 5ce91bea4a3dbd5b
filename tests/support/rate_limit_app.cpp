// The server of the rate-limit load test (tests/load/rate_limit_load.py): two event loops,
// 127.0.0.1 as a trusted proxy (so X-Forwarded-For names the client), `tern::rate_limit` on
// /limited (10 requests a minute per client address, 64 keys a loop) and nothing on /free.
//
//   rate_limit_app PORT
//
// SIGTERM stops it.

#include <tern/rate_limit.hpp>
#include <tern/tern.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: rate_limit_app PORT\n");
        return 2;
    }
    tern::app app;
    app.threads(2);
    app.trusted_proxies({"127.0.0.1"});
    app.before(
        "/limited",
        tern::rate_limit(
            {.requests = 10, .per = std::chrono::seconds(60), .max_keys = 64, .name = "load"}));
    app.get("/limited", [](tern::context& ctx) { ctx.text("ok"); });
    app.get("/free", [](tern::context& ctx) { ctx.text("free"); });
    app.listen("127.0.0.1", static_cast<std::uint16_t>(std::atoi(argv[1])));
}

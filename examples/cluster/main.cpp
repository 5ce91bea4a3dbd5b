// examples/cluster/app: one member of a fleet behind a load balancer (docs/deploy.md).
//
//   app [port] [--grace-ms N] [--name NAME] [--access-log]
//
// GET /       "<name> pid <pid>": which process answered, so a script sees the balancing
// GET /ready  200 while taking work; 503 from the moment a stop begins (SIGTERM)
// GET /live   200 while the event loops answer
// GET /metrics Prometheus text format (docs/metrics.md)
// POST /echo  the body back (a non-idempotent request, for the rolling-restart docs)
//
// Every answer carries X-Request-Id (nginx's $request_id when it sent one, else made here),
// which the access log (--access-log, on stdout) shows too; the client address is read from nginx's
// X-Forwarded-For (127.0.0.1 and ::1 are trusted as proxies).
//
// Started by systemd socket activation (LISTEN_FDS) it serves the socket it was given and
// ignores the port: a new process then takes over the same socket while the old one
// drains (rolling-restart.sh --handover shows it).
#include <tern/tern.hpp>

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <string_view>

namespace {

struct options {
    std::uint16_t port = 8080;
    std::chrono::milliseconds grace{2'000};
    std::string name = "app";
    bool access_log = false;
};

[[noreturn]] void usage(const char* why) {
    std::fprintf(stderr,
                 "cluster app: %s\nusage: app [port] [--grace-ms N] [--name NAME] [--access-log]\n",
                 why);
    std::exit(2);
}

unsigned long number(const char* text, unsigned long max) {
    char* end = nullptr;
    const unsigned long value = std::strtoul(text, &end, 10);
    if (end == text || *end != '\0' || value > max) usage("not a number in range");
    return value;
}

options parse(int argc, char** argv) {
    options o;
    for (int i = 1; i < argc; ++i) {
        const std::string_view arg = argv[i];
        if (arg == "--grace-ms" && i + 1 < argc) {
            o.grace = std::chrono::milliseconds(number(argv[++i], 600'000));
        } else if (arg == "--access-log") {
            o.access_log = true;
        } else if (arg == "--name" && i + 1 < argc) {
            o.name = argv[++i];
        } else if (!arg.empty() && arg[0] != '-') {
            o.port = static_cast<std::uint16_t>(number(argv[i], 65535));
        } else {
            usage("unknown argument");
        }
    }
    return o;
}

}  // namespace

int main(int argc, char** argv) {
    const options opt = parse(argc, argv);
    const std::string who = opt.name + " pid " + std::to_string(::getpid());
    tern::app app;
    tern::health_config health;
    health.grace = opt.grace;
    app.health(health);
    app.metrics("/metrics");
    app.request_ids();
    // nginx writes X-Forwarded-For (deploy.md's lines); a client's own Forwarded is not read.
    app.trusted_proxies({"127.0.0.1", "::1"}, tern::forwarding_header::x_forwarded_for);
    if (opt.access_log) app.request_logger(tern::access_log());
    app.get("/", [who](tern::context& ctx) { ctx.text(who); });
    app.get("/ip", [](tern::context& ctx) { ctx.text(ctx.ip()); });
    app.post("/echo", [](tern::context& ctx) { ctx.text(std::string(ctx.body())); });
    try {
        if (const auto fds = tern::listen_fds(); !fds.empty()) {
            std::printf("%s: serving the socket it was given (fd %d)\n", who.c_str(), fds[0]);
            std::fflush(stdout);
            app.listen_fd(fds[0]);
        } else {
            std::printf("%s: listening on port %u\n", who.c_str(), opt.port);
            std::fflush(stdout);
            app.listen(opt.port);
        }
    } catch (const std::exception& e) {
        std::fprintf(stderr, "cluster app: %s\n", e.what());
        return 1;
    }
    std::printf("%s: stopped\n", who.c_str());
    return 0;
}

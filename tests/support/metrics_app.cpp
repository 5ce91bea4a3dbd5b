// The server of the metrics client test (tests/clients/metrics_scrape.py): an app with
// app.metrics, request ids and 127.0.0.1 as a trusted proxy, and a route per status class.
//
//   metrics_app PORT
//
// SIGTERM stops it.

#include <tern/tern.hpp>

#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: metrics_app PORT\n");
        return 2;
    }
    tern::app app;
    app.threads(2);
    app.metrics("/metrics");
    app.request_ids();
    app.trusted_proxies({"127.0.0.1", "::1"});
    app.get("/ok", [](tern::context& ctx) { ctx.text("ok"); });
    app.post("/made", [](tern::context& ctx) { ctx.status(201).text("made"); });
    app.get("/boom", [](tern::context&) { throw std::runtime_error("boom"); });
    app.get("/ip", [](tern::context& ctx) { ctx.text(ctx.ip()); });
    app.get("/id", [](tern::context& ctx) { ctx.text(std::string(ctx.request_id())); });
    app.listen("127.0.0.1", static_cast<std::uint16_t>(std::atoi(argv[1])));
}

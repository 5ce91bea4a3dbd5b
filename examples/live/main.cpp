// A small live dashboard: everything that answers after the handler has returned.
//
//   live [port] [--ws-compression] [--cert FILE --key FILE [--http3]]
//                 (default port 8080; --ws-compression turns on permessage-deflate for
//                 /ws; with --cert and --key, PEM files, it serves HTTPS and wss://; with
//                 --http3 as well, HTTP/3 on the same port over UDP, in a tern built with
//                 HTTP/3, the default: docs/http3.md)
//
//   GET /                 the page (public/index.html): it shows /events as they arrive
//   GET /events           Server-Sent Events: `id: N`, `data: tick N` every 100 ms from 1;
//                         a reconnect with Last-Event-ID: K resumes at K+1 (at 1 when K
//                         is not a count from 0 to 2^63 - 2: malformed, negative, too big)
//   GET /stream?n=N&size=S  N pieces of S bytes ('a'..'z' repeating), produced only as fast
//                         as the client reads them
//   GET /later?ms=M       "later M" after M milliseconds, holding no thread meanwhile
//   GET /ws               WebSocket: every message (text or binary) is echoed back
//   POST /upload          the body (up to 1 GiB) spooled to a temporary file as it arrives,
//                         answered {"bytes": N, "sha256": "<hex>"}, hashed on the blocking
//                         pool by a coroutine handler
//
// The routes are in live_app.cpp, so that tests/examples/test_live.cpp runs them under the
// test kit (tern::testing); this file runs them on a port.

#include "live_app.hpp"

#include <tern/tern.hpp>

#include <charconv>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <string>
#include <string_view>

constexpr const char* usage =
    "usage: live [port] [--threads N] [--ws-compression] [--cert F --key F [--http3]]\n";

int main(int argc, char** argv) {
    std::uint16_t port = 8080;
    bool ws_compression = false;
    bool http3 = false;
    unsigned threads = 0;  // one event loop per hardware thread
    std::string cert_file;
    std::string key_file;
    for (int i = 1; i < argc; ++i) {
        const std::string_view arg = argv[i];
        if (arg == "--ws-compression") {
            ws_compression = true;
            continue;
        }
        if (arg == "--http3") {
            http3 = true;
            continue;
        }
        if (arg == "--threads" && i + 1 < argc) {
            const std::string_view n = argv[++i];
            const auto [end, ec] = std::from_chars(n.data(), n.data() + n.size(), threads);
            if (ec != std::errc{} || end != n.data() + n.size() || threads == 0) {
                std::fputs("live: --threads wants a number above 0\n", stderr);
                return 2;
            }
            continue;
        }
        if ((arg == "--cert" || arg == "--key") && i + 1 < argc) {
            (arg == "--cert" ? cert_file : key_file) = argv[++i];
            continue;
        }
        const auto [end, ec] = std::from_chars(arg.data(), arg.data() + arg.size(), port);
        if (ec != std::errc{} || end != arg.data() + arg.size()) {
            std::fputs(usage, stderr);
            return 2;
        }
    }
    if (cert_file.empty() != key_file.empty()) {
        std::fprintf(stderr, "live: --cert and --key go together\n");
        return 2;
    }
    if (http3 && cert_file.empty()) {
        std::fprintf(stderr, "live: --http3 needs --cert and --key\n");
        return 2;
    }

    live::services services;  // the timer thread and the SSE clients, made before the app
    tern::app app;
    live::add_routes(app, services);
    if (threads != 0) app.threads(threads);
    app.configure([&](tern::config& c) { c.websocket.compression = ws_compression; });

    if (!cert_file.empty()) app.tls(cert_file, key_file);
    if (http3) app.http3(port);
    std::printf("live: %s://127.0.0.1:%u/%s\n", cert_file.empty() ? "http" : "https",
                static_cast<unsigned>(port), http3 ? " (and HTTP/3 over UDP)" : "");
    std::fflush(stdout);
    int status = 0;
    try {
        app.listen(port);
    } catch (const std::exception& e) {
        // e.g. a port in use ("tern: http3: bind UDP 8443: Address already in use") or a
        // certificate that cannot be read
        std::fprintf(stderr, "live: %s\n", e.what());
        status = 1;
    }
    services.stop();  // ends the timer thread while the app still exists
    return status;
}

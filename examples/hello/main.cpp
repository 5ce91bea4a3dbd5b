// The Levtus benchmark app, ported line for line: its limits, static files from ./public,
// and GET/POST/PUT/DELETE on "/".
//
//   hello [port] [--cert FILE --key FILE [--ocsp FILE]]
//
// port: default 8080. ./public is served relative to the working directory. With --cert and
// --key (PEM files: the certificate chain and its key) it serves HTTPS on the port instead,
// and SIGHUP re-reads the files without dropping a connection (docs/tls.md); --ocsp names a
// DER OCSP response to staple.

#include <tern/tern.hpp>

#include <fmt/core.h>

#include <charconv>
#include <cstdio>
#include <exception>
#include <string>
#include <string_view>

namespace {

int usage(std::string_view why) {
    fmt::print(stderr,
               "usage: hello [port] [--threads N] [--cert FILE --key FILE [--ocsp FILE]]   "
               "({})\n",
               why);
    return 2;
}

}  // namespace

int main(int argc, char** argv) {
    std::uint16_t port = 8080;
    std::string cert_file;
    std::string key_file;
    std::string ocsp_file;
    unsigned threads = 0;  // one event loop per hardware thread
    for (int i = 1; i < argc; ++i) {
        const std::string_view arg = argv[i];
        if (arg == "--threads") {
            const std::string_view n = i + 1 < argc ? argv[++i] : "";
            const auto [end, ec] = std::from_chars(n.data(), n.data() + n.size(), threads);
            if (ec != std::errc{} || end != n.data() + n.size() || threads == 0) {
                return usage("--threads needs a number above 0");
            }
            continue;
        }
        if (arg == "--cert" || arg == "--key" || arg == "--ocsp") {
            if (i + 1 == argc) return usage(fmt::format("{} needs a file", arg));
            (arg == "--cert" ? cert_file : arg == "--key" ? key_file : ocsp_file) = argv[++i];
            continue;
        }
        const auto [end, ec] = std::from_chars(arg.data(), arg.data() + arg.size(), port);
        if (ec != std::errc{} || end != arg.data() + arg.size()) {
            return usage(fmt::format("'{}' is not a port", arg));
        }
    }
    if (cert_file.empty() != key_file.empty()) return usage("--cert and --key go together");
    if (!ocsp_file.empty() && cert_file.empty()) return usage("--ocsp needs --cert and --key");

    tern::app app;
    app.limits({.max_concurrent_connections = 500,
                .max_line_size = 4096,
                .max_header_count = 50,
                .max_header_size = 4096,
                .max_empty_lines = 3,
                .max_body_size = 1024 * 1024})
        .static_files("public");
    if (threads != 0) app.threads(threads);

    app.get("/", [](tern::context& ctx) {
        // Concatenated, not fmt::format: parsing a format string per request cost about
        // 400 instructions more (docs/performance.md, the callgrind guard).
        std::string answer = "An incoming ";
        answer.append(ctx.method()).append(" request!");
        ctx.text(std::move(answer));
    });
    app.post("/", [](tern::context& ctx) {
        ctx.status(201).content_type("text/plain").result("Created!");
    });
    app.put("/", [](tern::context& ctx) { ctx.text(std::string(ctx.body())); });
    app.del("/", [](tern::context& ctx) { ctx.text("Deleted successfully!"); });

    if (!cert_file.empty()) {
        tern::tls_config tls;
        tls.certificates.push_back(
            {.cert_file = cert_file, .key_file = key_file, .ocsp_response_file = ocsp_file});
        app.tls(tls);
    }

    fmt::print("hello: listening on {}://0.0.0.0:{}/ (Ctrl-C stops)\n",
               cert_file.empty() ? "http" : "https", port);
    std::fflush(stdout);
    try {
        app.listen(port);
    } catch (const std::exception& e) {
        // e.g. a certificate that cannot be read, or a port in use
        fmt::print(stderr, "hello: {}\n", e.what());
        return 1;
    }
    return 0;
}

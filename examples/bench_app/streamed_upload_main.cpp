// The server bench/streamed-upload.py sends its large bodies to: a route that reads its body
// as it arrives (tern::streamed_body) and hashes it, with no limit on the body's size.
//   POST /hash  -> "bytes=N fnv1a=H" (FNV-1a, 64 bits, of the body)
//   POST /parts -> "FIELD bytes=N fnv1a=H" per line, a multipart/form-data body's parts
//                  each hashed as it arrives (tern::multipart_reader; files up to 16 GiB)
//   GET /       -> 200 "Hello, World!" (what bench/lib waits for)
//
//   bench_streamed_upload_app [port] [--cert FILE --key FILE [--http3]]
//                             (default 8080; one worker thread, 127.0.0.1; with --cert and
//                             --key, PEM files, HTTPS (and HTTP/2 by ALPN); with --http3 as
//                             well, HTTP/3 on the same port over UDP)

#include <tern/tern.hpp>

#include <charconv>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <limits>
#include <optional>
#include <string>
#include <string_view>

int main(int argc, char** argv) {
    std::uint16_t port = 8080;
    std::string cert_file;
    std::string key_file;
    bool http3 = false;
    for (int i = 1; i < argc; ++i) {
        const std::string_view arg(argv[i]);
        if ((arg == "--cert" || arg == "--key") && i + 1 < argc) {
            (arg == "--cert" ? cert_file : key_file) = argv[++i];
        } else if (arg == "--http3") {
            http3 = true;
        } else if (i != 1 ||
                   std::from_chars(arg.data(), arg.data() + arg.size(), port).ec != std::errc{}) {
            std::fprintf(stderr, "usage: %s [port] [--cert FILE --key FILE [--http3]]\n", argv[0]);
            return 2;
        }
    }
    if (cert_file.empty() != key_file.empty() || (http3 && cert_file.empty())) {
        std::fprintf(stderr, "%s: --cert and --key go together, and --http3 needs them\n", argv[0]);
        return 2;
    }
    tern::config cfg;
    cfg.threads = 1;
    tern::app app(cfg);
    app.get("/", [](tern::context& ctx) { ctx.text("Hello, World!"); });
    app.post(
        "/hash",
        tern::body_limit(std::numeric_limits<std::size_t>::max(),
                         tern::streamed_body([](tern::context& ctx) -> tern::task {
                             tern::body_reader body = ctx.body_reader();
                             std::uint64_t h = 14695981039346656037ull;
                             std::uint64_t n = 0;
                             while (std::optional<std::string_view> piece = co_await body.next()) {
                                 for (const char c : *piece) {
                                     h ^= static_cast<unsigned char>(c);
                                     h *= 1099511628211ull;
                                 }
                                 n += piece->size();
                             }
                             ctx.text("bytes=" + std::to_string(n) + " fnv1a=" + std::to_string(h));
                         })));
    app.post(
        "/parts",
        tern::body_limit(
            std::numeric_limits<std::size_t>::max(),
            tern::streamed_body([](tern::context& ctx) -> tern::task {
                tern::multipart_reader parts(ctx, {.max_file_size = std::size_t{1} << 34});
                std::string report;
                while (std::optional<tern::multipart_part> part = co_await parts.next_part()) {
                    std::uint64_t h = 14695981039346656037ull;
                    std::uint64_t n = 0;
                    while (std::optional<std::string_view> piece = co_await parts.next_data()) {
                        for (const char c : *piece) {
                            h ^= static_cast<unsigned char>(c);
                            h *= 1099511628211ull;
                        }
                        n += piece->size();
                    }
                    report += part->field + " bytes=" + std::to_string(n) +
                              " fnv1a=" + std::to_string(h) + "\n";
                }
                ctx.text(report);
            })));
    if (!cert_file.empty()) app.tls(cert_file, key_file);
    if (http3) app.http3(port);
    try {
        app.listen("127.0.0.1", port);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "%s: %s\n", argv[0], e.what());
        return 1;
    }
}

// The server bench/streamed-upload.py sends its large bodies to: a route that reads its body
// as it arrives (tern::streamed_body) and hashes it, with no limit on the body's size.
//   POST /hash  -> "bytes=N fnv1a=H" (FNV-1a, 64 bits, of the body)
//   POST /parts -> "FIELD bytes=N fnv1a=H" per line, a multipart/form-data body's parts
//                  each hashed as it arrives (tern::multipart_reader; files up to 16 GiB)
//   GET /       -> 200 "Hello, World!" (what bench/lib waits for)
//
//   bench_streamed_upload_app [port]   (default 8080; one worker thread, 127.0.0.1)

#include <tern/tern.hpp>

#include <charconv>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <optional>
#include <string>
#include <string_view>

int main(int argc, char** argv) {
    std::uint16_t port = 8080;
    if (argc > 1) {
        const std::string_view arg(argv[1]);
        if (std::from_chars(arg.data(), arg.data() + arg.size(), port).ec != std::errc{}) {
            std::fprintf(stderr, "usage: %s [port]\n", argv[0]);
            return 2;
        }
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
    app.listen("127.0.0.1", port);
}

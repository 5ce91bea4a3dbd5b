// The Levtus benchmark app, ported line for line: its limits, static files from ./public,
// and GET/POST/PUT/DELETE on "/".
//
//   hello [port]      (default 8080; serves ./public relative to the working directory)

#include <tern/tern.hpp>

#include <fmt/core.h>

#include <charconv>
#include <cstdio>
#include <string_view>

int main(int argc, char** argv) {
    std::uint16_t port = 8080;
    if (argc > 1) {
        const std::string_view arg = argv[1];
        const auto [end, ec] = std::from_chars(arg.data(), arg.data() + arg.size(), port);
        if (ec != std::errc{} || end != arg.data() + arg.size()) {
            fmt::print(stderr, "usage: hello [port]   ('{}' is not a port)\n", arg);
            return 2;
        }
    }

    tern::app app;
    app.max_concurrent_connections(500)
        .max_body_size(1024 * 1024)
        .max_header_count(50)
        .max_header_size(4096)
        .max_line_size(4096)
        .max_empty_lines(3)
        .static_files("public");

    app.get("/", [](tern::context& ctx) {
        ctx.text(fmt::format("An incoming {} request!", ctx.method()));
    });
    app.post("/", [](tern::context& ctx) {
        ctx.status(201).content_type("text/plain").result("Created!");
    });
    app.put("/", [](tern::context& ctx) { ctx.text(std::string(ctx.body())); });
    app.del("/", [](tern::context& ctx) { ctx.text("Deleted successfully!"); });

    fmt::print("hello: listening on http://0.0.0.0:{}/ (Ctrl-C stops)\n", port);
    std::fflush(stdout);
    app.listen(port);
    return 0;
}

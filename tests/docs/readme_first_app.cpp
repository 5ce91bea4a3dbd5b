// The first app of README.md, compiled in CI (tests/docs/check_snippets.py checks that the
// README's text is this file's). Built, not run: it would block on port 8080.
// clang-format off
#include <tern/tern.hpp>
#include <string>

int main(int argc, char** argv) {
    tern::app app;
    app.limits({.max_header_count = 50, .max_body_size = 1024 * 1024});
    app.get("/", [](tern::context& ctx) { ctx.text("Hello from tern!"); });
    app.get("/users/{id}", [](tern::context& ctx) {
        ctx.text("user " + std::string(ctx.path_param("id")));
    });
    app.post("/", [](tern::context& ctx) {
        ctx.status(201).content_type("text/plain").result("Created!");
    });
    if (argc == 3) app.tls(argv[1], argv[2]);  // HTTPS: certificate chain, key (PEM files)
    app.listen(8080);  // blocks; SIGINT/SIGTERM stop it gracefully
}
// clang-format on

// Snippets quoted by docs/*.md that are not whole programs, compiled in CI so the docs cannot
// drift from the API (tests/docs/check_snippets.py checks that the docs' text is here or in
// examples/). Each function holds the snippets of one page; none is called.
// clang-format off
#include <tern/json.hpp>
#include <tern/tern.hpp>

#include <chrono>
#include <cstdio>
#include <string>

namespace docs_limits {
void snippets() {
tern::config cfg;
cfg.header_timeout = std::chrono::seconds(5);
cfg.keep_alive_timeout = std::chrono::seconds(15);
tern::app app(cfg);
app.max_body_size(1024 * 1024);
}
}  // namespace docs_limits

namespace docs_routing {
void snippets(tern::app& app, const tern::handler& h) {
app.get("/", h);                       // exact: hash-table lookup
app.get("/users/{id}", h);             // one segment, ctx.path_param("id")
app.get("/files/<path>", h);           // the rest of the path, slashes included
app.get("/static/*", h);               // the rest of the path, not captured
app.get("/a/*/c", h);                  // * in the middle: exactly one segment
app.add("PROPFIND", "/dav/<path>", h); // any RFC 9110 method token
}
}  // namespace docs_routing

namespace docs_static_files {
void snippets(tern::app& app) {
app.static_files("public");                    // GET /css/site.css -> public/css/site.css

tern::static_files_config assets;
assets.hosted_path = "/assets";                // GET /assets/app.js -> build/app.js
assets.directory = "build";
assets.cache_control = "public, max-age=31536000, immutable";
assets.extra_mime_types = {{"glb", "model/gltf-binary"}};
app.static_files(assets);
}
}  // namespace docs_static_files
namespace docs_errors {
void snippets(tern::app& app) {
app.before([](tern::context& ctx) { ctx.header("X-All", "yes"); });
app.before("/api/*", [](tern::context& ctx) { ctx.header("X-Api", "yes"); });
app.after([](tern::context& ctx) { ctx.header("X-Content-Type-Options", "nosniff"); });
}
}  // namespace docs_errors
namespace docs_logging {
void snippets(tern::app& app) {
app.request_logger([](const tern::context& ctx, std::chrono::nanoseconds took) {
    std::fprintf(stderr, "%d %s %lld us\n", ctx.status(), std::string(ctx.path()).c_str(),
                 static_cast<long long>(took.count() / 1000));
});
}
}  // namespace docs_logging
// clang-format on

// app.openapi (the document at a path, built when first asked for) and app.swagger_ui (the
// page, its script and style from npm's swagger-ui-dist); docs/openapi.md.

#include "app/app_impl.hpp"
#include "app/openapi_document.hpp"

#include <tern/openapi.hpp>

#include <fstream>
#include <iterator>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <utility>

#ifndef TERN_SWAGGER_UI_INSTALL_DIR
#define TERN_SWAGGER_UI_INSTALL_DIR ""
#endif
#ifndef TERN_SWAGGER_UI_BUILD_DIR
#define TERN_SWAGGER_UI_BUILD_DIR ""
#endif

namespace tern {

namespace {

// A route of tern's own that the document leaves out.
route_handler hidden_route(handler h) {
    route_handler r(std::move(h));
    r.doc(std::make_shared<const api_doc>(api_doc().hidden()));
    return r;
}

// A fixed path under which tern adds routes of its own: no pattern syntax.
std::string literal_path(std::string_view path, const char* what) {
    if (path.empty() || path.front() != '/' ||
        path.find_first_of("{}<>*") != std::string_view::npos) {
        throw std::invalid_argument(std::string("tern: ") + what + " path '" + std::string(path) +
                                    "' must begin with '/' and hold no {}, <> or *");
    }
    return std::string(path);
}

// The document, made once from the route table, whose routes are fixed by then.
struct openapi_state {
    const detail::router* routes = nullptr;
    const detail::route_docs* docs = nullptr;
    openapi_info info;
    std::once_flag once;
    std::string text;

    const std::string& document() {
        std::call_once(once,
                       [this] { text = detail::openapi_document(*routes, *docs, info).dump(); });
        return text;
    }
};

bool readable_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return in.good();
}

std::string read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw std::runtime_error("tern: cannot read " + path);
    std::ostringstream out;
    out << in.rdbuf();
    return std::move(out).str();
}

// The directory that holds Swagger UI's files: the caller's, else the installed copy, else
// the copy tern was built from.
std::string swagger_assets(std::string chosen) {
    auto has_files = [](const std::string& dir) {
        return !dir.empty() && readable_file(dir + "/swagger-ui-bundle.js") &&
               readable_file(dir + "/swagger-ui.css");
    };
    if (!chosen.empty()) {
        if (has_files(chosen)) return chosen;
        throw std::runtime_error("tern: swagger_ui: '" + chosen +
                                 "' holds no swagger-ui-bundle.js and swagger-ui.css");
    }
    for (const char* dir : {TERN_SWAGGER_UI_INSTALL_DIR, TERN_SWAGGER_UI_BUILD_DIR}) {
        if (has_files(dir)) return dir;
    }
    throw std::runtime_error(
        "tern: swagger_ui: Swagger UI's files (npm's swagger-ui-dist) were not found: tern was "
        "built without them, or they were removed; scripts/install-deps.sh installs them, or "
        "pass their directory as swagger_ui's third argument");
}

}  // namespace

app& app::openapi(std::string_view path) { return openapi(path, openapi_info{}); }

app& app::openapi(std::string_view path, const openapi_info& info) {
    impl_->require_not_started("openapi");
    auto state = std::make_shared<openapi_state>();
    state->routes = &impl_->chain.routes;
    state->docs = &impl_->docs;
    state->info = info;
    get(literal_path(path, "openapi"),
        hidden_route([state](context& ctx) { ctx.json_text(state->document()); }));
    return *this;
}

app& app::swagger_ui(std::string_view path, std::string_view document_path,
                     std::string assets_directory) {
    impl_->require_not_started("swagger_ui");
    const std::string page_path = literal_path(path, "swagger_ui");
    // Its files go under the page's path: "/docs" and "/docs/" alike give "/docs/...".
    std::string base = page_path;
    while (!base.empty() && base.back() == '/') base.pop_back();
    const std::string dir = swagger_assets(std::move(assets_directory));
    auto bundle = std::make_shared<const std::string>(read_file(dir + "/swagger-ui-bundle.js"));
    auto style = std::make_shared<const std::string>(read_file(dir + "/swagger-ui.css"));
    // The page's own script is a file, not inline, so that a Content-Security-Policy without
    // 'unsafe-inline' lets it run.
    auto init = std::make_shared<const std::string>(
        "window.ui = SwaggerUIBundle({url: " + json(std::string(document_path)).dump() +
        ", dom_id: \"#swagger-ui\", deepLinking: true});\n");
    auto page = std::make_shared<const std::string>(
        "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
        "<title>Swagger UI</title>\n<link rel=\"stylesheet\" href=\"" +
        base +
        "/swagger-ui.css\">\n</head>\n<body>\n<div id=\"swagger-ui\"></div>\n<script src=\"" +
        base + "/swagger-ui-bundle.js\"></script>\n<script src=\"" + base +
        "/swagger-initializer.js\"></script>\n</body>\n</html>\n");
    // Swagger UI's own files change only with tern: cached for an hour. The page and its
    // script name the document, which may change with the app: asked again each time.
    auto serve = [](std::shared_ptr<const std::string> body, const char* type, const char* cache) {
        return hidden_route([body = std::move(body), type, cache](context& ctx) {
            ctx.content_type(type).header("Cache-Control", cache).result(*body);
        });
    };
    constexpr const char* script = "text/javascript; charset=utf-8";
    get(page_path, serve(page, "text/html; charset=utf-8", "no-cache"));
    get(base + "/swagger-ui-bundle.js", serve(bundle, script, "public, max-age=3600"));
    get(base + "/swagger-ui.css", serve(style, "text/css; charset=utf-8", "public, max-age=3600"));
    get(base + "/swagger-initializer.js", serve(init, script, "no-cache"));
    return *this;
}

}  // namespace tern

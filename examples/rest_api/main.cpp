// A small JSON REST API for a to-do list: route groups, an auth filter, JSON in and out,
// typed parameters, exception mapping, error handlers, cookies, a form login, uploads,
// redirects, CORS, compression and an access log. The API is in todo_api.cpp, which the
// docs quote (docs/json.md, docs/errors.md, docs/forms.md, docs/cors.md,
// docs/compression.md) and tests/examples/test_rest_api.cpp tests with the test kit
// (docs/testing.md); this file runs it on a port with an access log (docs/logging.md).
//
//   rest_api [port]      (default 8080)
//
//   curl -i -c jar -d 'user=demo&password=demo' localhost:8080/login
//   curl -b jar -d '{"title":"write docs"}' localhost:8080/api/todos
//   curl -b jar 'localhost:8080/api/todos?limit=10'
//   curl localhost:8080/openapi.json      (and Swagger UI at http://localhost:8080/docs)

#include "todo_api.hpp"

#include <tern/tern.hpp>

#include <charconv>
#include <cstdio>
#include <stdexcept>
#include <string_view>

int main(int argc, char** argv) {
    std::uint16_t port = 8080;
    if (argc > 1) {
        const std::string_view arg = argv[1];
        const auto [end, ec] = std::from_chars(arg.data(), arg.data() + arg.size(), port);
        if (ec != std::errc{} || end != arg.data() + arg.size()) {
            std::fprintf(stderr, "usage: rest_api [port]\n");
            return 2;
        }
    }

    rest_api::todo_store store;
    tern::app app;
    rest_api::add_routes(app, store);
    app.request_logger(tern::access_log());  // one line per request on stderr
    // The OpenAPI document is at /openapi.json (add_routes); Swagger UI shows it at /docs.
    try {
        app.swagger_ui("/docs", "/openapi.json");
    } catch (const std::runtime_error& e) {  // built without npm's swagger-ui-dist
        std::fprintf(stderr, "rest_api: no Swagger UI at /docs: %s\n", e.what());
    }

    std::printf("rest_api: listening on http://0.0.0.0:%u/ (Ctrl-C stops)\n", port);
    std::fflush(stdout);
    app.listen(port);
    return 0;
}

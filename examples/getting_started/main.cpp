// The first app of docs/getting-started.md: three routes on port 8080.
//
//   curl http://localhost:8080/
//   curl http://localhost:8080/hello/Ada?greeting=Hi
//   curl -d 'some text' http://localhost:8080/echo

#include <tern/tern.hpp>

#include <iostream>
#include <string>
#include <system_error>

int main() {
    tern::app app;
    app.max_body_size(64 * 1024);  // a larger request body gets 413

    app.get("/", [](tern::context& ctx) { ctx.text("Hello from tern!\n"); });

    app.get("/hello/{name}", [](tern::context& ctx) {
        const std::string greeting = ctx.query_param("greeting").value_or("Hello");
        ctx.text(greeting + ", " + std::string(ctx.path_param("name")) + "!\n");
    });

    app.post("/echo", [](tern::context& ctx) {
        if (ctx.body().empty()) throw tern::http_error(400, "send a body to echo\n");
        ctx.text(std::string(ctx.body()) + "\n");
    });

    std::cout << "my_app: starting on http://localhost:8080/ (Ctrl-C stops)" << std::endl;
    try {
        app.listen(8080);  // blocks; SIGINT or SIGTERM stops it gracefully
    } catch (const std::system_error& e) {
        std::cerr << "cannot listen on port 8080: " << e.what() << '\n';
        return 1;
    }
    std::cout << "my_app: stopped" << std::endl;
}

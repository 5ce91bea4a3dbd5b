// The first test of docs/getting-started.md: the /hello route under tern's test kit, with
// plain assert() (no test framework). The test target is built with -UNDEBUG so that the
// asserts stay in a Release build.

#include <tern/tern.hpp>
#include <tern/testing.hpp>

#include <cassert>
#include <string>

int main() {
    tern::app app;
    app.get("/hello/{name}", [](tern::context& ctx) {
        const std::string greeting = ctx.query_param("greeting").value_or("Hello");
        ctx.text(greeting + ", " + std::string(ctx.path_param("name")) + "!\n");
    });

    tern::testing::test(app, [](tern::testing::server&, tern::testing::client& http) {
        const auto r = http.get("/hello/Ada?greeting=Hi");
        assert(r.status == 200);
        assert(r.body == "Hi, Ada!\n");
        assert(r.header("content-type") == "text/plain; charset=utf-8");
        assert(http.get("/nowhere").status == 404);
        assert(http.request("DELETE", "/hello/Ada").status == 405);
    });
}

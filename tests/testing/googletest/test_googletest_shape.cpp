// The GoogleTest shape of docs/testing.md, compiled and run as it is shown there.

#include <gtest/gtest.h>
#include <tern/tern.hpp>
#include <tern/testing.hpp>

TEST(Hello, AnswersHelloAndKeepsServing) {
    tern::app app;
    app.get("/hello", [](tern::context& ctx) { ctx.text("hello"); });
    tern::testing::test(app, [](tern::testing::server&, tern::testing::client& http) {
        const auto r = http.get("/hello");
        EXPECT_EQ(r.status, 200);
        EXPECT_EQ(r.body, "hello");
        EXPECT_EQ(http.head("/hello").body, "");
    });
}

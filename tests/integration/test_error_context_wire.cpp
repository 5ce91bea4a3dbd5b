// What error responses keep and tell (issue 22, item 6): headers kept with
// tern::keep_on_error, ctx.error_cause(), header fields on an http_error, one rule for
// status codes, several request loggers, and attributes from filter to handler.

#include <catch2/catch.hpp>
#include <exception>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "support/eventually.hpp"
#include "support/raw_client.hpp"
#include "support/test_server.hpp"

namespace wire_test_error_context_wire {

using namespace tern_test;

namespace {

struct app_failure : std::runtime_error {
    using std::runtime_error::runtime_error;
};

std::string cause_name(tern::error_cause c) {
    switch (c) {
        case tern::error_cause::none:
            return "none";
        case tern::error_cause::no_route:
            return "no_route";
        case tern::error_cause::method_not_allowed:
            return "method_not_allowed";
        case tern::error_cause::static_file:
            return "static_file";
        case tern::error_cause::thrown:
            return "thrown";
        case tern::error_cause::status_set:
            return "status_set";
        case tern::error_cause::refused:
            return "refused";
    }
    return "?";
}

}  // namespace

TEST_CASE("a header set with keep_on_error survives thrown errors, mapped ones and 404s",
          "[wire][errors]") {
    test_server server([](tern::app& app) {
        app.before([](tern::context& ctx) {
            ctx.header("X-Request-Id", "req-42", tern::keep_on_error);
            ctx.header("X-Plain", "dropped on errors");
        });
        app.get("/ok", [](tern::context& ctx) { ctx.text("ok"); });
        app.get("/http-error", [](tern::context&) { throw tern::not_found("no such item"); });
        app.get("/std", [](tern::context&) { throw std::logic_error("bug"); });
        app.get("/mapped", [](tern::context&) { throw app_failure("mapped"); });
        app.get("/replaced", [](tern::context& ctx) {
            ctx.header("X-Request-Id", "req-43", tern::keep_on_error);
            throw tern::conflict("taken");
        });
        app.exception<app_failure>(
            [](app_failure& e, tern::context& ctx) { ctx.status(409).text(e.what()); });
        app.error(503, [](tern::context&) { throw std::runtime_error("error handler broke"); });
        app.get("/unavailable", [](tern::context& ctx) { ctx.status(503); });
        // The kept fields travel with a request to the blocking pool and into a deferred
        // completion.
        app.get("/blocking", tern::blocking([](tern::context&) { throw std::logic_error("b"); }));
        app.get("/deferred", [](tern::context& ctx) {
            ctx.defer().fail(std::make_exception_ptr(tern::gone("later")));
        });
    });
    struct probe {
        const char* target;
        int status;
        bool plain_kept;  // headers without the tag stay where the response is not restarted
    };
    for (const auto& p : {probe{"/ok", 200, true}, probe{"/http-error", 404, false},
                          probe{"/std", 500, false}, probe{"/mapped", 409, false},
                          probe{"/nowhere", 404, true}, probe{"/unavailable", 500, false},
                          probe{"/blocking", 500, false}, probe{"/deferred", 410, false}}) {
        const auto r = fetch(server, get_request(p.target));
        INFO(p.target << " -> " << describe(r));
        CHECK(r.status == p.status);
        CHECK(r.header("X-Request-Id") == "req-42");
        CHECK(r.header_count("X-Request-Id") == 1);
        CHECK(r.header("X-Plain").has_value() == p.plain_kept);
    }
    // Kept again under the same name: the last value, once.
    const auto r = fetch(server, get_request("/replaced"));
    INFO(describe(r));
    CHECK(r.status == 409);
    CHECK(r.header("X-Request-Id") == "req-43");
    CHECK(r.header_count("X-Request-Id") == 1);
}

TEST_CASE("keep_on_error refuses Content-Type and Connection, and bad fields as header() does",
          "[wire][errors]") {
    test_server server([](tern::app& app) {
        app.get("/", [](tern::context& ctx) {
            std::string out;
            for (const char* name : {"Content-Type", "connection", "Bad Name", "Date"}) {
                try {
                    ctx.header(name, "x", tern::keep_on_error);
                    out += "kept ";
                } catch (const std::invalid_argument&) {
                    out += "refused ";
                }
            }
            ctx.text(out);
        });
    });
    const auto r = fetch(server, get_request("/"));
    CHECK(r.body == "refused refused refused refused ");
}

TEST_CASE("an error handler tells a routing 404 from a thrown not_found by error_cause()",
          "[wire][errors]") {
    test_server server([](tern::app& app) {
        app.configure([](tern::config& c) { c.limits.max_header_size = 512; });
        app.get("/item", [](tern::context&) { throw tern::not_found("item 7 is gone"); });
        app.get("/status", [](tern::context& ctx) { ctx.status(404); });
        app.post("/only-post", [](tern::context& ctx) { ctx.text("posted"); });
        app.get("/boom", [](tern::context&) { throw std::runtime_error("disk on fire"); });
        for (int status : {404, 405, 431, 500}) {
            app.error(status, [](tern::context& ctx) {
                ctx.text(cause_name(ctx.error_cause()) + "|" + std::string(ctx.error_message()));
            });
        }
    });
    struct probe {
        std::string request;
        int status;
        const char* body;
    };
    const std::vector<probe> probes = {
        {get_request("/nowhere"), 404, "no_route|"},
        {get_request("/item"), 404, "thrown|item 7 is gone"},
        {get_request("/status"), 404, "status_set|"},
        {get_request("/only-post"), 405, "method_not_allowed|"},
        // The message of a std::exception reaches the error handler, never the client
        // unless the handler sends it.
        {get_request("/boom"), 500, "thrown|disk on fire"},
    };
    for (const auto& p : probes) {
        const auto r = fetch(server, p.request);
        INFO(p.request << " -> " << describe(r));
        CHECK(r.status == p.status);
        CHECK(r.body == p.body);
    }
    const auto r = expect_rejected(
        server, get_request("/item", "X-Big: " + std::string(600, 'a') + "\r\n"), 431);
    CHECK(r.body == "refused|");
}

TEST_CASE("error_cause() is none on a normal response and read by loggers and after filters",
          "[wire][errors][logging]") {
    std::mutex m;
    std::vector<std::string> seen;
    test_server server([&](tern::app& app) {
        app.get("/ok", [](tern::context& ctx) { ctx.text(cause_name(ctx.error_cause())); });
        app.after([](tern::context& ctx) { ctx.header("X-Cause", cause_name(ctx.error_cause())); });
        app.request_logger([&](const tern::context& ctx, std::chrono::nanoseconds) {
            std::lock_guard lock(m);
            seen.push_back(std::string(ctx.path()) + ":" + cause_name(ctx.error_cause()));
        });
    });
    auto r = fetch(server, get_request("/ok"));
    CHECK(r.body == "none");
    CHECK(r.header("X-Cause") == "none");
    r = fetch(server, get_request("/missing"));
    CHECK(r.header("X-Cause") == "no_route");
    CHECK(eventually([&] {
        std::lock_guard lock(m);
        return seen.size() == 2;
    }));
    std::lock_guard lock(m);
    CHECK(seen == std::vector<std::string>{"/ok:none", "/missing:no_route"});
}

TEST_CASE("an http_error carries header fields, such as WWW-Authenticate on a 401",
          "[wire][errors]") {
    test_server server([](tern::app& app) {
        app.get("/me", [](tern::context&) {
            throw tern::unauthorized("log in first")
                .header("WWW-Authenticate", "Bearer realm=\"api\"")
                .header("Cache-Control", "no-store");
        });
        app.get("/generic", [](tern::context&) {
            throw tern::http_error(429, "slow down").header("Retry-After", "30");
        });
        app.get("/bad-field", [](tern::context&) {
            throw tern::forbidden("no").header("X-Bad", "line\r\nbreak");
        });
        // The fluent call keeps the type: a mapper for unauthorized still catches it.
        app.get("/mapped", [](tern::context&) {
            throw tern::unauthorized("mapped").header("WWW-Authenticate", "Basic");
        });
    });
    auto r = fetch(server, get_request("/me"));
    INFO(describe(r));
    CHECK(r.status == 401);
    CHECK(r.body == "log in first");
    CHECK(r.header("WWW-Authenticate") == "Bearer realm=\"api\"");
    CHECK(r.header("Cache-Control") == "no-store");
    r = fetch(server, get_request("/generic"));
    CHECK(r.status == 429);
    CHECK(r.header("Retry-After") == "30");
    // A field that would split the response is refused as ctx.header refuses it: a 500.
    r = fetch(server, get_request("/bad-field"));
    CHECK(r.status == 500);
    CHECK_FALSE(r.header("X-Bad").has_value());
    check_still_serving(server.port());
}

TEST_CASE("a fluent header() on a named http_error keeps its type for mappers", "[wire][errors]") {
    test_server server([](tern::app& app) {
        app.get("/", [](tern::context&) {
            throw tern::unauthorized("who?").header("WWW-Authenticate", "Basic");
        });
        app.exception<tern::unauthorized>([](tern::unauthorized& e, tern::context& ctx) {
            ctx.status(e.status())
                .text(std::string("mapped:") + e.what() + ":" + e.headers().at(0).second);
        });
    });
    const auto r = fetch(server, get_request("/"));
    CHECK(r.status == 401);
    CHECK(r.body == "mapped:who?:Basic");
}

TEST_CASE("http_error refuses a status outside 400..599 and status() one outside 200..599",
          "[wire][errors]") {
    CHECK_THROWS_AS(tern::http_error(200, "fine"), std::invalid_argument);
    CHECK_THROWS_AS(tern::http_error(302, "moved"), std::invalid_argument);
    CHECK_THROWS_AS(tern::http_error(600, "odd"), std::invalid_argument);
    CHECK(tern::http_error(400, "low").status() == 400);
    CHECK(tern::http_error(599, "high").status() == 599);
    test_server server([](tern::app& app) {
        app.get("/", [](tern::context& ctx) {
            std::string out;
            for (int code : {199, 200, 599, 600, 999}) {
                try {
                    ctx.status(code);
                    out += "accepted ";
                } catch (const std::invalid_argument&) {
                    out += "refused ";
                }
            }
            ctx.status(200).text(out);
        });
        app.get("/throw-200", [](tern::context&) { throw tern::http_error(200, "not an error"); });
        app.error(500, [](tern::context& ctx) { ctx.text(std::string(ctx.error_message())); });
    });
    auto r = fetch(server, get_request("/"));
    CHECK(r.body == "refused accepted accepted refused refused ");
    // Loud: the refusal is what the handler threw, a 500 whose cause names the mistake.
    r = fetch(server, get_request("/throw-200"));
    CHECK(r.status == 500);
    CHECK(r.body == "tern: http_error status 200 is outside 400..599");
}

TEST_CASE("several request loggers run in registration order, past one that throws",
          "[wire][logging]") {
    std::mutex m;
    std::vector<std::string> calls;
    test_server server([&](tern::app& app) {
        app.get("/hi", [](tern::context& ctx) { ctx.text("hi"); });
        app.request_logger(tern::access_log([&](std::string_view line) {
            std::lock_guard lock(m);
            calls.push_back("access:" + std::string(line.substr(0, 9)));
        }));
        app.request_logger([&](const tern::context&, std::chrono::nanoseconds) {
            {
                std::lock_guard lock(m);
                calls.emplace_back("throwing");
            }
            throw std::runtime_error("sink down");
        });
        app.request_logger([&](const tern::context& ctx, std::chrono::nanoseconds) {
            std::lock_guard lock(m);
            calls.push_back("metrics:" + std::to_string(ctx.status()));
        });
    });
    const auto r = fetch(server, get_request("/hi"));
    CHECK(r.body == "hi");
    CHECK(eventually([&] {
        std::lock_guard lock(m);
        return calls.size() == 3;
    }));
    std::lock_guard lock(m);
    CHECK(calls == std::vector<std::string>{"access:127.0.0.1", "throwing", "metrics:200"});
}

TEST_CASE("an empty request logger is refused", "[wire][logging]") {
    tern::app app;
    CHECK_THROWS_AS(app.request_logger(tern::log_handler{}), std::invalid_argument);
}

TEST_CASE("a before filter hands a value to the handler through ctx.attribute", "[wire][context]") {
    struct user {
        std::string name;
        int id = 0;
    };
    std::mutex m;
    std::vector<std::string> logged;
    test_server server([&](tern::app& app) {
        app.before("/me", [](tern::context& ctx) {
            ctx.attribute("user", user{"ann", 7});
            ctx.attribute("count", 1).attribute("count", 2);  // replaced
        });
        app.get("/me", [](tern::context& ctx) {
            const user* u = ctx.attribute<user>("user");
            const int* count = ctx.attribute<int>("count");
            const bool wrong_type = ctx.attribute<std::string>("user") == nullptr;
            const bool absent = ctx.attribute<user>("nobody") == nullptr;
            REQUIRE(u != nullptr);
            REQUIRE(count != nullptr);
            ctx.text(u->name + "#" + std::to_string(u->id) + " " + std::to_string(*count) +
                     (wrong_type ? " wrong-type-null" : "") + (absent ? " absent-null" : ""));
        });
        app.get("/other", [](tern::context& ctx) {
            ctx.text(ctx.attribute<user>("user") == nullptr ? "none" : "leaked");
        });
        app.request_logger([&](const tern::context& ctx, std::chrono::nanoseconds) {
            const user* u = ctx.attribute<user>("user");
            std::lock_guard lock(m);
            logged.push_back(u != nullptr ? u->name : "-");
        });
    });
    raw_client c = server.client();
    c.send(get_request("/me") + get_request("/other"));
    auto r = c.read_response();
    INFO(describe(r));
    CHECK(r.body == "ann#7 2 wrong-type-null absent-null");
    // The next request on the connection (and the loop) starts without them.
    CHECK(c.read_response().body == "none");
    CHECK(eventually([&] {
        std::lock_guard lock(m);
        return logged.size() == 2;
    }));
    std::lock_guard lock(m);
    CHECK(logged == std::vector<std::string>{"ann", "-"});
}

}  // namespace wire_test_error_context_wire

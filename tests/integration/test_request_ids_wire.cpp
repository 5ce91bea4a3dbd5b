// app.request_ids over the wire (docs/logging.md): a valid incoming id is kept, a bad one
// replaced, made ones are distinct, and every response carries its id back, errors and
// refusals included, as does the access log line.

#include "support/test_server.hpp"

#include <catch2/catch.hpp>

#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace wire_test_request_ids_wire {

using namespace tern_test;

namespace {

/// Made ids: 16 hex digits, '-', a hex counter.
bool looks_made(const std::string& id) {
    if (id.size() < 18 || id[16] != '-') return false;
    for (std::size_t i = 0; i < id.size(); ++i) {
        if (i == 16) continue;
        const char c = id[i];
        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
    }
    return true;
}

void routes(tern::app& app) {
    app.request_ids();
    app.get("/id", [](tern::context& ctx) { ctx.text(std::string(ctx.request_id())); });
    app.get("/boom", [](tern::context&) { throw std::runtime_error("boom"); });
    app.get("/mine",
            [](tern::context& ctx) { ctx.header("X-Request-Id", "handler-set").text("x"); });
}

}  // namespace

TEST_CASE("a valid incoming request id is kept, seen by the handler and echoed", "[request_id]") {
    test_server server(routes);
    const std::vector<std::string> ids = {"abc-123", "f47ac10b-58cc-4372-a567-0e02b2c3d479",
                                          "trace:a/b@c+d=e_f.g", std::string(128, 'z')};
    for (const auto& id : ids) {
        const auto r = fetch(server, get_request("/id", "X-Request-Id: " + id + "\r\n"));
        INFO(describe(r));
        CHECK(r.body == id);
        CHECK(r.header("X-Request-Id") == id);
        CHECK(r.header_count("X-Request-Id") == 1);
    }
    // Whatever the case of the field name.
    CHECK(fetch(server, get_request("/id", "x-request-id: lower\r\n")).body == "lower");
}

TEST_CASE("a request id too long or with bad characters is replaced, not echoed", "[request_id]") {
    test_server server(routes);
    const std::vector<std::string> bads = {std::string(129, 'z'), "a b", "a\"b", "<script>", "a,b",
                                           "caf\xc3\xa9"};
    for (const auto& bad : bads) {
        const auto r = fetch(server, get_request("/id", "X-Request-Id: " + bad + "\r\n"));
        INFO(describe(r));
        REQUIRE(r.header("X-Request-Id"));
        CHECK(*r.header("X-Request-Id") != bad);
        CHECK(looks_made(*r.header("X-Request-Id")));
        CHECK(r.body == *r.header("X-Request-Id"));
    }
}

TEST_CASE("made request ids are distinct across 1000 requests", "[request_id]") {
    test_server server(routes);
    std::set<std::string> seen;
    for (int conn = 0; conn < 10; ++conn) {
        raw_client c = server.client();
        for (int i = 0; i < 100; ++i) {
            c.send(get_request("/id"));
            const auto r = c.read_response();
            REQUIRE(r.header("X-Request-Id"));
            CHECK(looks_made(r.body));
            CHECK(r.body == *r.header("X-Request-Id"));
            seen.insert(r.body);
        }
    }
    CHECK(seen.size() == 1000);
}

TEST_CASE("error answers carry the request id: a thrown handler, 404, 413, 431", "[request_id]") {
    tern::config cfg = test_config();
    cfg.limits.max_body_size = 10;
    cfg.limits.max_header_count = 10;
    test_server server(routes, cfg);
    auto check_id = [&](const std::string& request, int status) {
        const auto r = fetch(server, request);
        INFO(describe(r));
        CHECK(r.status == status);
        CHECK(r.header("X-Request-Id") == "err-1");
    };
    const std::string id = "X-Request-Id: err-1\r\n";
    check_id(get_request("/boom", id), 500);
    check_id(get_request("/nowhere", id), 404);
    check_id(body_request("POST", "/id", std::string(100, 'x'), id), 413);
    std::string many = id;
    for (int i = 0; i < 12; ++i) many += "X-H" + std::to_string(i) + ": v\r\n";
    check_id(get_request("/id", many), 431);
    // A refusal before the headers were read has no id to keep: a made one.
    const auto early = fetch(server, "GET /" + std::string(9000, 'a') + " HTTP/1.1\r\n\r\n");
    CHECK(early.status == 414);
    REQUIRE(early.header("X-Request-Id"));
    CHECK(looks_made(*early.header("X-Request-Id")));
    // The server keeps serving.
    CHECK(fetch(server, get_request("/id", id)).body == "err-1");
}

TEST_CASE("the request id replaces one the handler set under the same name", "[request_id]") {
    test_server server(routes);
    const auto r = fetch(server, get_request("/mine", "X-Request-Id: sent-1\r\n"));
    CHECK(r.header("X-Request-Id") == "sent-1");
    CHECK(r.header_count("X-Request-Id") == 1);
}

TEST_CASE("the request id can use another header and is off by default", "[request_id]") {
    test_server named([](tern::app& app) {
        app.request_ids("X-Correlation-Id");
        app.get("/id", [](tern::context& ctx) { ctx.text(std::string(ctx.request_id())); });
    });
    const auto r = fetch(named, get_request("/id", "X-Correlation-Id: corr-9\r\n"));
    CHECK(r.body == "corr-9");
    CHECK(r.header("X-Correlation-Id") == "corr-9");
    CHECK_FALSE(r.header("X-Request-Id"));

    test_server plain([](tern::app& app) {
        app.get("/id", [](tern::context& ctx) { ctx.text(std::string(ctx.request_id())); });
    });
    const auto off = fetch(plain, get_request("/id", "X-Request-Id: abc\r\n"));
    CHECK(off.body.empty());
    CHECK_FALSE(off.header("X-Request-Id"));

    tern::app app;
    CHECK_THROWS_AS(app.request_ids("Bad Name"), std::invalid_argument);
}

TEST_CASE("the access log line ends with the request id when ids are on", "[request_id]") {
    std::mutex m;
    std::vector<std::string> lines;
    test_server server([&](tern::app& app) {
        routes(app);
        app.request_logger(tern::access_log([&](std::string_view line) {
            std::lock_guard lock(m);
            lines.emplace_back(line);
        }));
    });
    CHECK(fetch(server, get_request("/id", "X-Request-Id: logged-7\r\n")).status == 200);
    const auto made = fetch(server, get_request("/nowhere"));
    std::lock_guard lock(m);
    REQUIRE(lines.size() == 2);
    CHECK(lines[0].find("\"GET /id HTTP/1.1\" 200 ") != std::string::npos);
    CHECK(lines[0].size() > 10);
    CHECK(lines[0].substr(lines[0].size() - 10) == "\"logged-7\"");
    const std::string tail = "\"" + made.header("X-Request-Id").value_or("?") + "\"";
    CHECK(lines[1].substr(lines[1].size() - tail.size()) == tail);
}

TEST_CASE("the access log line keeps its format when ids are off", "[request_id]") {
    std::mutex m;
    std::vector<std::string> lines;
    test_server server([&](tern::app& app) {
        app.get("/x", [](tern::context& ctx) { ctx.text("x"); });
        app.request_logger(tern::access_log([&](std::string_view line) {
            std::lock_guard lock(m);
            lines.emplace_back(line);
        }));
    });
    CHECK(fetch(server, get_request("/x", "X-Request-Id: abc\r\n")).status == 200);
    std::lock_guard lock(m);
    REQUIRE(lines.size() == 1);
    CHECK(lines[0].substr(lines[0].size() - 2) == "ms");
}

}  // namespace wire_test_request_ids_wire

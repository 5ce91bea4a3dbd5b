// Hostile JSON request bodies over the wire: nesting past max_json_depth and bodies past
// max_json_size are refused before a document is built, and the server keeps serving.

#include <tern/json.hpp>

#include <catch2/catch.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "support/raw_client.hpp"
#include "support/test_server.hpp"

namespace wire_test_json_limits {

using namespace tern_test;

namespace {

// `depth` opening brackets, then as many closing ones: valid JSON nested `depth` deep.
std::string nested_arrays(std::size_t depth) {
    return std::string(depth, '[') + std::string(depth, ']');
}

struct keeps_subdocument {
    tern::json inner;
};

void from_json(const tern::json& j, keeps_subdocument& k) { k.inner = j.at(0); }

// POST /echo answers the body parsed and serialized again (/blocking the same on the blocking
// pool); POST /keep keeps a sub-document through a from_json and sends it.
void routes(tern::app& app) {
    app.post("/echo", [](tern::context& ctx) { ctx.json(ctx.body_as<tern::json>()); });
    app.post("/keep", [](tern::context& ctx) { ctx.json(ctx.body_as<keeps_subdocument>().inner); });
    app.post("/blocking",
             tern::blocking([](tern::context& ctx) { ctx.json(ctx.body_as<tern::json>()); }));
}

}  // namespace

TEST_CASE("a body nested 60000 deep gets 400 naming max_json_depth, and the server lives",
          "[wire][json][limits]") {
    test_server server(routes);
    // 60000 is issue 13's body; 500000 is as deep as max_json_size (1 MiB) lets a body go.
    for (const std::size_t depth : {std::size_t{60000}, std::size_t{500000}})
        for (const char* target : {"/echo", "/keep"}) {
            INFO("depth: " << depth << ", target: " << target);
            raw_client c = server.client();
            c.send(body_request("POST", target, nested_arrays(depth)));
            const response r = c.read_response();
            INFO(describe(r));
            CHECK(r.status == 400);
            CHECK(r.body.find("max_json_depth (512)") != std::string::npos);
            check_common_headers(r);
            // As for any 400 a handler throws: the body was read in full, the connection stays.
            CHECK_FALSE(r.header("Connection").has_value());
            c.send(get_request(alive_path));
            CHECK(c.read_response().body == "alive");
            check_still_serving(server.port());
        }
}

TEST_CASE("a body nested exactly max_json_depth deep is accepted, one deeper is refused",
          "[wire][json][limits]") {
    tern::config cfg = test_config();
    cfg.limits.max_json_depth = 40;
    test_server server(routes, cfg);
    auto r = fetch(server, body_request("POST", "/echo", nested_arrays(40)));
    CHECK(r.status == 200);
    CHECK(r.body == nested_arrays(40));
    // Brackets inside strings are not nesting.
    const std::string in_string = "[\"" + std::string(100, '[') + "\\\"" + "\"]";
    r = fetch(server, body_request("POST", "/echo", in_string));
    CHECK(r.status == 200);
    CHECK(r.body == in_string);
    r = fetch(server, body_request("POST", "/echo", nested_arrays(41)));
    CHECK(r.status == 400);
    CHECK(r.body == "JSON nesting deeper than max_json_depth (40)");
    // A handler on the blocking pool has the same limits.
    r = fetch(server, body_request("POST", "/blocking", nested_arrays(40)));
    CHECK(r.status == 200);
    r = fetch(server, body_request("POST", "/blocking", nested_arrays(41)));
    CHECK(r.status == 400);
    CHECK(r.body == "JSON nesting deeper than max_json_depth (40)");
    // Objects count as arrays do.
    std::string objects;
    for (int i = 0; i < 41; ++i) objects += "{\"a\":";
    objects += "1" + std::string(41, '}');
    r = fetch(server, body_request("POST", "/echo", objects));
    CHECK(r.status == 400);
    CHECK(r.body == "JSON nesting deeper than max_json_depth (40)");
}

TEST_CASE("a JSON body over max_json_size gets 413 naming the limit, one at the limit is parsed",
          "[wire][json][limits]") {
    tern::config cfg = test_config();
    cfg.limits.max_json_size = 64;
    test_server server(routes, cfg);
    const std::string at_limit = "[\"" + std::string(60, 'x') + "\"]";
    REQUIRE(at_limit.size() == 64);
    auto r = fetch(server, body_request("POST", "/echo", at_limit));
    CHECK(r.status == 200);
    CHECK(r.body == at_limit);
    raw_client c = server.client();
    c.send(body_request("POST", "/echo", "[\"" + std::string(61, 'x') + "\"]"));
    r = c.read_response();
    INFO(describe(r));
    CHECK(r.status == 413);
    CHECK(r.body == "JSON request body larger than max_json_size (64 bytes)");
    CHECK_FALSE(r.header("Connection").has_value());
    c.send(get_request(alive_path));
    CHECK(c.read_response().body == "alive");
}

TEST_CASE("a number no double can hold is a 400, not a 500", "[wire][json]") {
    // Found by fuzz_json: nlohmann_json throws out_of_range, not parse_error, for it.
    test_server server(routes);
    const response r = fetch(server, body_request("POST", "/echo", "[1.5e3000]"));
    CHECK(r.status == 400);
    CHECK(r.body.rfind("malformed JSON in the request body: ", 0) == 0);
    CHECK(r.body.find("number overflow") != std::string::npos);
}

TEST_CASE("a NUL byte in a JSON body is a 400, not the end of the document", "[wire][json]") {
    // nlohmann_json stops reading at a NUL and would parse this as [1] (found by fuzz_json).
    test_server server(routes);
    const response r = fetch(server, body_request("POST", "/echo", std::string("[1]\0[2]", 7)));
    CHECK(r.status == 400);
    CHECK(r.body == "malformed JSON in the request body: a NUL byte at offset 3");
}

TEST_CASE("limits.max_json_depth and max_json_size refuse meaningless values",
          "[wire][json][limits]") {
    tern::app app;
    CHECK_THROWS_AS(app.limits({.max_json_depth = 0}), std::invalid_argument);
    CHECK_THROWS_AS(app.limits({.max_json_size = 0}), std::invalid_argument);
    app.limits({.max_json_size = 10, .max_json_depth = 3});
    CHECK(app.settings().limits.max_json_depth == 3);
    CHECK(app.settings().limits.max_json_size == 10);
    CHECK(tern::config{}.limits.max_json_depth == 512);
    CHECK(tern::config{}.limits.max_json_size == 1024 * 1024);
}

}  // namespace wire_test_json_limits

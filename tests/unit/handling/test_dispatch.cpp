// The handling layer without a socket: a request string parsed by the parser adapter,
// run through dispatch() with a handler_chain built here, and the response checked as data.
// Filters, exception mappers, error shaping, CORS and compression, as the wire tests check
// them over loopback, but without a connection.

#include <catch2/catch.hpp>

#include "handling/dispatch.hpp"
#include "http/parser.hpp"

#include <tern/http_error.hpp>

#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace unit_test_handling_dispatch {

using namespace tern::detail;

namespace {

// One exchange: parses `raw` (one whole request) and runs it through `p`.
class exchange_run {
public:
    exchange_run(const handler_chain& p, std::string_view raw) : parser_(parser_limits{}) {
        const auto r = parser_.feed(raw);
        REQUIRE(r.what == request_parser::event::request);
        exchange ex{parser_.current(), res_, "127.0.0.1", scratch_, {.max_upload_file_size = 1024}};
        dispatch(p, ex);
    }

    const response& res() const noexcept { return res_; }

    std::optional<std::string> field(std::string_view name) const {
        for (const auto& [n, v] : res_.fields) {
            if (n == name) return v;
        }
        return std::nullopt;
    }

private:
    request_parser parser_;
    response res_;
    exchange_scratch scratch_;
};

std::string get(std::string_view target, std::string_view extra = "") {
    return "GET " + std::string(target) + " HTTP/1.1\r\nHost: x\r\n" + std::string(extra) + "\r\n";
}

}  // namespace

TEST_CASE("handling: before filters, the handler and after filters run in order", "[handling]") {
    handler_chain p;
    p.routes.add("GET", "/items/{id}", [](tern::context& ctx) {
        ctx.result(std::string(ctx.result()) + "H" + std::string(ctx.path_param("id")));
    });
    p.before.add({}, [](tern::context& ctx) {
        ctx.result("b1");
        ctx.skip_remaining();
    });
    p.before.add({"/items/{id}"}, [](tern::context& ctx) { ctx.header("X-Never", "1"); });
    p.after.add({"/items/{n}"}, [](tern::context& ctx) {
        ctx.result(std::string(ctx.result()) + "a" + std::string(ctx.path_param("n")));
    });
    // A before filter that sets a result ends the request: the second filter and the
    // handler are skipped, the after filter still runs with its own parameter.
    exchange_run run(p, get("/items/7"));
    CHECK(run.res().status == 200);
    CHECK(run.res().body == "b1a7");
    CHECK_FALSE(run.field("X-Never"));
}

TEST_CASE("handling: a thrown exception goes to the most derived mapper", "[handling]") {
    handler_chain p;
    p.routes.add("GET", "/boom", [](tern::context&) { throw std::out_of_range("deep"); });
    p.exceptions.add(make_exception_mapper<std::exception>(
        [](std::exception&, tern::context& ctx) { ctx.status(500).text("base"); }));
    p.exceptions.add(make_exception_mapper<std::logic_error>(
        [](std::logic_error& e, tern::context& ctx) { ctx.status(409).text(e.what()); }));
    exchange_run run(p, get("/boom"));
    CHECK(run.res().status == 409);
    CHECK(run.res().body == "deep");
}

TEST_CASE("handling: tern's errors are text, or problem+json for a JSON client", "[handling]") {
    handler_chain p;
    p.routes.add("GET", "/nf", [](tern::context&) { throw tern::not_found("user 7"); });
    exchange_run text(p, get("/nf"));
    CHECK(text.res().status == 404);
    CHECK(text.res().content_type == "text/plain; charset=utf-8");
    CHECK(text.res().body == "user 7");
    exchange_run json(p, get("/nf", "Accept: application/json\r\n"));
    CHECK(json.res().status == 404);
    CHECK(json.res().content_type == "application/problem+json");
    CHECK(json.res().body == R"({"detail":"user 7","status":404,"title":"Not Found"})");
    // A path nobody routes, and one routed for another method.
    exchange_run missing(p, get("/nowhere"));
    CHECK(missing.res().status == 404);
    exchange_run wrong(p, "DELETE /nf HTTP/1.1\r\nHost: x\r\n\r\n");
    CHECK(wrong.res().status == 405);
    CHECK(wrong.field("Allow").has_value());
}

TEST_CASE("handling: an error handler reshapes tern's error, one that throws gives tern's 500",
          "[handling]") {
    handler_chain p;
    p.errors.emplace(404,
                     [](tern::context& ctx) { ctx.text("custom: " + std::string(ctx.result())); });
    p.errors.emplace(405, [](tern::context& ctx) {
        ctx.header("X-Partial", "1");
        throw std::runtime_error("oops");
    });
    p.routes.add("POST", "/only-post", [](tern::context& ctx) { ctx.text("posted"); });
    exchange_run shaped(p, get("/missing"));
    CHECK(shaped.res().status == 404);
    CHECK(shaped.res().body == "custom: Not Found");
    exchange_run failed(p, get("/only-post"));
    CHECK(failed.res().status == 500);
    CHECK(failed.res().body == "Internal Server Error");
    CHECK_FALSE(failed.field("X-Partial"));
}

TEST_CASE("handling: CORS headers go on answers and errors, preflights end early", "[handling]") {
    handler_chain p;
    tern::cors_config cors;
    cors.allowed_origins = {"https://app.example"};
    p.cors = std::make_unique<cors_policy>(cors);
    bool before_ran = false;
    p.before.add({}, [&](tern::context&) { before_ran = true; });
    p.routes.add("GET", "/data", [](tern::context& ctx) { ctx.text("d"); });
    exchange_run ok(p, get("/data", "Origin: https://app.example\r\n"));
    CHECK(ok.field("Access-Control-Allow-Origin") == "https://app.example");
    exchange_run error(p, get("/missing", "Origin: https://app.example\r\n"));
    CHECK(error.res().status == 404);
    CHECK(error.field("Access-Control-Allow-Origin") == "https://app.example");
    before_ran = false;
    exchange_run preflight(p,
                           "OPTIONS /data HTTP/1.1\r\nHost: x\r\n"
                           "Origin: https://app.example\r\n"
                           "Access-Control-Request-Method: PUT\r\n\r\n");
    CHECK(preflight.res().status == 204);
    CHECK_FALSE(before_ran);  // preflights carry no credentials: answered before filters
}

TEST_CASE("handling: a large body is gzipped for a client that accepts it", "[handling]") {
    handler_chain p;
    p.compression = tern::compression_config{};
    p.routes.add("GET", "/big", [](tern::context& ctx) { ctx.text(std::string(4096, 'z')); });
    exchange_run plain(p, get("/big"));
    CHECK(plain.res().body.size() == 4096);
    CHECK_FALSE(plain.field("Content-Encoding"));
    exchange_run gz(p, get("/big", "Accept-Encoding: gzip\r\n"));
    CHECK(gz.field("Content-Encoding") == "gzip");
    CHECK(gz.res().body.size() < 4096);
    CHECK(gz.field("Vary") == "Accept-Encoding");
}

}  // namespace unit_test_handling_dispatch

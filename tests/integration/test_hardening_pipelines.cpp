// Hardening matrix, pipelines mixing good and bad requests (RFC 9112 §9.3.2, docs/http.md):
// the requests before a bad one are answered in order, the bad one gets its error with
// `Connection: close`, and nothing after it runs (a counting route proves it). The same for a
// request that asks to close. A long pipeline of good requests is answered in order.

#include <atomic>
#include <catch2/catch.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "support/raw_client.hpp"
#include "support/test_server.hpp"

namespace wire_test_hardening_pipelines {

using namespace tern_test;

namespace {

/// A pipeline sent in one write and the statuses of the responses expected, in order; the
/// last expected response closes the connection.
struct pipeline_case {
    std::string_view name;
    std::string bytes;
    std::vector<int> statuses;
};

/// A server with a counting route, GET /after, that no case may reach.
struct pipeline_target {
    std::atomic<int> after{0};
    test_server server{[this](tern::app& app) {
        app.get("/", [](tern::context& ctx) { ctx.text("root"); });
        app.get("/n/{i}", [](tern::context& ctx) { ctx.text(std::string(ctx.path_param("i"))); });
        app.post("/echo", [](tern::context& ctx) { ctx.result(std::string(ctx.body())); });
        app.get("/after", [this](tern::context& ctx) {
            ++after;
            ctx.text("after");
        });
    }};
};

const std::string good = get_request("/");
const std::string after_request = get_request("/after");

}  // namespace

TEST_CASE("a pipeline is answered up to its first bad or closing request and no further",
          "[wire][hardening][pipelines]") {
    const pipeline_case c = GENERATE(values<pipeline_case>({
        {"good, good, bad header",
         good + good + "GET / HTTP/1.1\r\nHost: x\r\nBad Header: 1\r\n\r\n" + after_request,
         {200, 200, 400}},
        {"good, bad request line", good + "GARBAGE\r\n\r\n" + after_request, {200, 400}},
        {"good, missing Host", good + "GET / HTTP/1.1\r\n\r\n" + after_request, {200, 400}},
        {"good, CR then X after the header block",
         good + "GET / HTTP/1.1\r\nHost: x\r\n\r\rX" + after_request,
         {200, 400}},
        {"good, HTTP/2.0", good + "GET / HTTP/2.0\r\nHost: x\r\n\r\n" + after_request, {200, 505}},
        {"good, CONNECT",
         good + "CONNECT h:1 HTTP/1.1\r\nHost: h:1\r\n\r\n" + after_request,
         {200, 501}},
        {"good, unknown Expect",
         good + get_request("/", "Expect: foo\r\n") + after_request,
         {200, 417}},
        {"good, Content-Length over max_body_size",
         good + "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999\r\n\r\n" +
             after_request,
         {200, 413}},
        {"good, bad chunk size",
         good + "POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n" +
             after_request,
         {200, 400}},
        {"good, gzip, chunked",
         good +
             "POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n" +
             after_request,
         {200, 501}},
        {"Connection: close, good",
         get_request("/", "Connection: close\r\n") + after_request,
         {200}},
        {"good, Connection: close, good",
         good + get_request("/", "Connection: close\r\n") + after_request,
         {200, 200}},
        {"HTTP/1.0 without keep-alive, good", "GET / HTTP/1.0\r\n\r\n" + after_request, {200}},
        {"chunked POST, bad",
         "POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
         "5\r\nhello\r\n0\r\n\r\nGET / HTTP/1.1\r\nHost : x\r\n\r\n" +
             after_request,
         {200, 400}},
    }));
    pipeline_target t;
    INFO("case: " << c.name);
    raw_client client = t.server.client();
    client.send(c.bytes);
    response last;
    for (std::size_t i = 0; i < c.statuses.size(); ++i) {
        last = client.read_response();
        INFO("response " << i << ": " << describe(last));
        CHECK(last.status == c.statuses[i]);
        check_common_headers(last);
    }
    check_closed_and_still_serving(client, last, t.server.port());
    CHECK(t.after.load() == 0);
}

TEST_CASE("100 tiny pipelined requests in one send get 100 responses in order",
          "[wire][hardening][pipelines]") {
    pipeline_target t;
    raw_client c = t.server.client();
    std::string batch;
    for (int i = 0; i < 100; ++i)
        batch += "GET /n/" + std::to_string(i) + " HTTP/1.1\r\nHost: x\r\n\r\n";
    c.send(batch);
    for (int i = 0; i < 100; ++i) {
        const response r = c.read_response();
        INFO("request " << i << ": " << describe(r));
        REQUIRE(r.status == 200);
        REQUIRE(r.body == std::to_string(i));
    }
    CHECK(c.buffered().empty());
    c.send(get_request(alive_path));
    CHECK(c.read_response().body == "alive");
}

TEST_CASE("a pipeline mixing bodies and methods is answered in order",
          "[wire][hardening][pipelines]") {
    pipeline_target t;
    raw_client c = t.server.client();
    c.send(body_request("POST", "/echo", "one") + get_request("/n/2") +
           "POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: "
           "chunked\r\n\r\n5\r\nthree\r\n0\r\n\r\n" +
           "HEAD /n/4 HTTP/1.1\r\nHost: x\r\n\r\n" + body_request("POST", "/echo", "") +
           get_request("/n/6", "Connection: close\r\n"));
    CHECK(c.read_response().body == "one");
    CHECK(c.read_response().body == "2");
    CHECK(c.read_response().body == "three");
    const response head = c.read_response(true);
    CHECK(head.status == 200);
    CHECK(head.header("Content-Length") == std::optional<std::string>("1"));
    const response empty = c.read_response();
    CHECK(empty.status == 200);
    CHECK(empty.body.empty());
    const response last = c.read_response();
    CHECK(last.body == "6");
    check_closed_and_still_serving(c, last, t.server.port());
}

}  // namespace wire_test_hardening_pipelines

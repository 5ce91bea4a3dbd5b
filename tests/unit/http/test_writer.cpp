// The response writer and the Date cache, without sockets.

#include "http/date.hpp"
#include "http/writer.hpp"

#include <catch2/catch.hpp>

#include <string>

namespace unit_test_http_writer {

using tern::detail::framing;
using tern::detail::response;

namespace {

// The response with its Date line removed, so expectations can be exact.
std::string without_date(std::string s) {
    const auto at = s.find("Date: ");
    REQUIRE(at != std::string::npos);
    s.erase(at, s.find("\r\n", at) + 2 - at);
    return s;
}

}  // namespace

TEST_CASE("IMF-fixdate is formatted as RFC 9110 shows it", "[writer]") {
    char out[29];
    tern::detail::format_http_date(784111777, out);
    CHECK(std::string(out, sizeof out) == "Sun, 06 Nov 1994 08:49:37 GMT");
    tern::detail::format_http_date(0, out);
    CHECK(std::string(out, sizeof out) == "Thu, 01 Jan 1970 00:00:00 GMT");
}

TEST_CASE("the cached Date is a well-formed current date", "[writer]") {
    const auto now = tern::detail::http_date_now();
    CHECK(now.size() == 29);
    CHECK(now.substr(25) == " GMT");
}

TEST_CASE("a response with a body gets Content-Type and Content-Length", "[writer]") {
    response res;
    res.content_type = "text/plain";
    res.body = "hi";
    std::string out;
    write_response(out, res, framing{});
    CHECK(without_date(out) ==
          "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n\r\nhi");
}

TEST_CASE("an empty body has Content-Length 0 and no Content-Type", "[writer]") {
    response res;
    res.content_type = "text/plain";
    std::string out;
    write_response(out, res, framing{});
    CHECK(without_date(out) == "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n");
}

TEST_CASE("HEAD keeps Content-Length but sends no body", "[writer]") {
    response res;
    res.body = "twelve bytes";
    std::string out;
    framing how;
    how.omit_body = true;
    write_response(out, res, how);
    CHECK(without_date(out) == "HTTP/1.1 200 OK\r\nContent-Length: 12\r\n\r\n");
}

TEST_CASE("204 and 304 carry neither Content-Length nor body", "[writer]") {
    for (int status : {204, 304}) {
        response res;
        res.status = status;
        res.body = "ignored";
        std::string out;
        write_response(out, res, framing{});
        CHECK(out.find("Content-Length") == std::string::npos);
        CHECK(out.substr(out.size() - 4) == "\r\n\r\n");
    }
}

TEST_CASE("Connection is announced only when it differs from the version's default", "[writer]") {
    response res;
    std::string closing, kept, plain;
    framing close_it;
    close_it.close = true;
    write_response(closing, res, close_it);
    framing old_keep;
    old_keep.keep_alive_1_0 = true;
    write_response(kept, res, old_keep);
    write_response(plain, res, framing{});
    CHECK(closing.find("Connection: close\r\n") != std::string::npos);
    CHECK(kept.find("Connection: keep-alive\r\n") != std::string::npos);
    CHECK(plain.find("Connection") == std::string::npos);
}

TEST_CASE("responses append so pipelined answers share one buffer", "[writer]") {
    response a, b;
    a.body = "one";
    b.body = "two";
    std::string out;
    write_response(out, a, framing{});
    write_response(out, b, framing{});
    CHECK(out.find("one") < out.find("two"));
    CHECK(out.substr(out.size() - 3) == "two");
}

TEST_CASE("user header fields follow the framing fields", "[writer]") {
    response res;
    res.fields.emplace_back("X-Custom", "1");
    std::string out;
    write_response(out, res, framing{});
    CHECK(without_date(out) == "HTTP/1.1 200 OK\r\nContent-Length: 0\r\nX-Custom: 1\r\n\r\n");
}

TEST_CASE("error responses are plain text and close the connection", "[writer]") {
    std::string out;
    tern::detail::write_error_response(out, 503, "Retry-After: 1\r\n");
    CHECK(without_date(out) ==
          "HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain; charset=utf-8\r\n"
          "Content-Length: 19\r\nConnection: close\r\nRetry-After: 1\r\n\r\n"
          "Service Unavailable");
}

TEST_CASE("100 Continue is a bare status line", "[writer]") {
    std::string out;
    tern::detail::write_continue(out);
    CHECK(out == "HTTP/1.1 100 Continue\r\n\r\n");
}

TEST_CASE("response::clear frees a large body and keeps a small one", "[writer][memory]") {
    response res;
    res.body.assign(1024 * 1024, 'x');
    res.clear();
    CHECK(res.body.empty());
    CHECK(res.body.capacity() <= tern::detail::retained_buffer_capacity);
    res.body.assign(1000, 'y');
    const auto kept = res.body.capacity();
    res.clear();
    CHECK(res.body.capacity() == kept);
}

TEST_CASE("a body with trailers goes out chunked, the trailers in the last chunk", "[writer]") {
    response res;
    res.body = "hello";
    res.trailers = {{"grpc-status", "0"}, {"x-sum", "5"}};
    framing how;
    how.trailers = true;
    std::string out;
    tern::detail::write_response(out, res, how);
    CHECK(out.find("Content-Length") == std::string::npos);
    CHECK(out.find("Transfer-Encoding: chunked\r\n") != std::string::npos);
    const std::string tail = "\r\n\r\n00000005\r\nhello\r\n0\r\ngrpc-status: 0\r\nx-sum: 5\r\n\r\n";
    REQUIRE(out.size() > tail.size());
    CHECK(out.substr(out.size() - tail.size()) == tail);

    // Without how.trailers (HTTP/1.0, HEAD) they are not sent, and the length is.
    std::string plain;
    tern::detail::write_response(plain, res, framing{});
    CHECK(plain.find("Content-Length: 5\r\n") != std::string::npos);
    CHECK(plain.find("grpc-status") == std::string::npos);
}

}  // namespace unit_test_http_writer

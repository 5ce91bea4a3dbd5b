// The HTTP/2 field mapping's two halves without a connection (src/http/field_section.hpp): a
// request head as nghttp2 hands its fields over, and a response's HEADERS fields.

#include "http/field_section.hpp"
#include "http/request.hpp"
#include "http/response.hpp"
#include "http/token.hpp"

#include <nghttp2/nghttp2.h>

#include <catch2/catch.hpp>

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace unit_test_h2_fields {

using namespace tern::detail;

namespace {

std::vector<std::pair<std::string, std::string>> as_pairs(const response_fields<nghttp2_nv>& head) {
    std::vector<std::pair<std::string, std::string>> out;
    for (const auto& nv : head.fields()) {
        out.emplace_back(std::string(reinterpret_cast<const char*>(nv.name), nv.namelen),
                         std::string(reinterpret_cast<const char*>(nv.value), nv.valuelen));
    }
    return out;
}

}  // namespace

TEST_CASE("h2 request head: the fields become a request whose views point into its storage",
          "[h2][fields]") {
    request_head head(head_limits{});
    head.add(":method", "GET");
    head.add(":scheme", "https");
    head.add(":path", "/a/b?x=1");
    head.add(":authority", "example.com");
    head.add("cookie", "a=1");
    head.add("user-agent", "test-client/1.0 with a long value");
    head.add("cookie", "b=2");
    request req;
    REQUIRE(head.fill(req));
    CHECK(req.method == "GET");
    CHECK(req.path == "/a/b");
    CHECK(req.query == "x=1");
    CHECK(req.version_major == 2);
    REQUIRE(req.headers.size() == 3);
    CHECK(req.headers[0].name == "Host");
    CHECK(req.headers[0].value == "example.com");
    CHECK(req.headers[1].name == "cookie");
    CHECK(req.headers[1].value == "a=1; b=2");  // RFC 9113 8.2.3: joined once, in place
    CHECK(req.headers[2].value == "test-client/1.0 with a long value");
    const auto inside = [&req](std::string_view v) {
        return v.data() >= req.storage.data() &&
               v.data() + v.size() <= req.storage.data() + req.storage.size();
    };
    CHECK(inside(req.method));
    CHECK(inside(req.target));
    CHECK(inside(req.headers[1].value));
    CHECK(inside(req.headers[2].name));
    // A copy (a deferred request) rebases every view into its own storage.
    request copy;
    copy_request(req, copy);
    CHECK(copy.headers[1].value == "a=1; b=2");
    CHECK(copy.target.data() != req.target.data());
}

TEST_CASE("h2 request head: a Host that differs from :authority and a missing :path are refused",
          "[h2][fields]") {
    request_head differs(head_limits{});
    differs.add(":method", "GET");
    differs.add(":path", "/");
    differs.add(":authority", "a.example");
    differs.add("host", "b.example");
    request req;
    CHECK_FALSE(differs.fill(req));

    request_head same(head_limits{});
    same.add(":method", "GET");
    same.add(":path", "/");
    same.add(":authority", "a.example");
    same.add("host", "a.example");
    REQUIRE(same.fill(req));
    REQUIRE(req.headers.size() == 1);  // the client's own Host, no second one
    CHECK(req.headers[0].name == "host");

    request_head no_path(head_limits{});
    no_path.add(":method", "GET");
    CHECK_FALSE(no_path.fill(req));
}

TEST_CASE("h2 request head: the limits count fields as over HTTP/1", "[h2][fields]") {
    head_limits limits;
    limits.max_header_count = 2;
    limits.max_line_size = 16;
    request_head many(limits);
    many.add(":method", "GET");
    many.add(":path", "/");
    many.add("a", "1");
    many.add("b", "2");
    CHECK(many.state() == request_head::verdict::ok);
    many.add("c", "3");
    CHECK(many.refusal_status() == 431);

    request_head line(limits);
    line.add(":method", "GET");
    line.add(":path", "/0123456789abcdef");
    CHECK(line.refusal_status() == 414);
}

TEST_CASE("h2 response head: status, date, type, length, then the user's fields lower-cased",
          "[h2][fields]") {
    response res;
    res.status = 201;
    res.content_type = "text/plain";
    res.body = "hello";
    res.fields.emplace_back("X-Custom-Name", "v");
    res.fields.emplace_back("Connection", "close");           // connection-specific: left out
    res.fields.emplace_back("Transfer-Encoding", "chunked");  // likewise
    res.fields.emplace_back("TE", "trailers");                // likewise
    res.fields.emplace_back("ETag", "\"abc\"");
    response_fields<nghttp2_nv> head;
    head.build(res);
    const auto fields = as_pairs(head);
    REQUIRE(fields.size() == 6);
    CHECK(fields[0] == std::pair<std::string, std::string>(":status", "201"));
    CHECK(fields[1].first == "date");
    CHECK(fields[1].second.size() == 29);
    CHECK(fields[2] == std::pair<std::string, std::string>("content-type", "text/plain"));
    CHECK(fields[3] == std::pair<std::string, std::string>("content-length", "5"));
    CHECK(fields[4] == std::pair<std::string, std::string>("x-custom-name", "v"));
    CHECK(fields[5] == std::pair<std::string, std::string>("etag", "\"abc\""));

    // Reused for the next response: nothing of the first is left.
    response none;
    none.status = 204;
    none.fields.emplace_back("Keep-Alive", "timeout=5");
    head.build(none);
    const auto second = as_pairs(head);
    REQUIRE(second.size() == 2);
    CHECK(second[0].second == "204");
    CHECK(second[1].first == "date");
}

TEST_CASE("field names are lower-cased eight bytes at a time as one byte at a time",
          "[h2][fields]") {
    // Every byte value at every place of names of 0 to 19 bytes (shorter than a word, a word
    // and a part, two words and three bytes), among neighbours that are upper case, lower
    // case and non-ASCII: the word-wide copy must map A-Z only, carry nothing into the next
    // byte, and write exactly the name's bytes.
    for (std::size_t length = 0; length <= 19; ++length) {
        for (const char around :
             {'Q', 'q', '@', '[', static_cast<char>(0xC1), static_cast<char>(0xFF)}) {
            for (std::size_t at = 0; at < length; ++at) {
                for (int b = 0; b < 256; ++b) {
                    std::string name(length, around);
                    name[at] = static_cast<char>(b);
                    std::string fast(length + 1, '#');  // one byte past the name: untouched
                    ascii_lower_copy(fast.data(), name.data(), name.size());
                    std::string slow = name;
                    for (char& c : slow) c = ascii_lower(c);
                    REQUIRE(fast == slow + "#");
                }
            }
        }
    }
}

}  // namespace unit_test_h2_fields

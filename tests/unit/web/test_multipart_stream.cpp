// multipart/form-data bodies read as they arrive (web/multipart_stream.hpp), without
// sockets: pieces of every size and split position, checked against the whole-body parser.

#include "web/multipart.hpp"
#include "web/multipart_stream.hpp"

#include <catch2/catch.hpp>

#include <cstddef>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

namespace unit_test_web_multipart_stream {

using tern::detail::multipart_limits;
using tern::detail::multipart_part;
using tern::detail::multipart_status;
using tern::detail::multipart_stream;
using tern::detail::parse_multipart;
using event = multipart_stream::event;

namespace {

std::string lines(std::initializer_list<std::string_view> ls) {
    std::string out;
    for (auto l : ls) {
        out.append(l);
        out += "\r\n";
    }
    return out;
}

struct part_copy {
    std::string name;
    bool has_filename = false;
    std::string filename;
    std::string content_type;
    std::string data;
    bool complete = false;
    bool operator==(const part_copy&) const = default;
};

struct outcome {
    multipart_status status = multipart_status::ok;
    std::string message;
    std::vector<part_copy> parts;  // complete ones, and the one being read at a failure
    std::size_t data_events = 0;
};

// Feeds `body` cut at `cuts` (ascending positions) and collects what the parser tells.
outcome stream(std::string_view body, const std::vector<std::size_t>& cuts,
               const multipart_limits& limits = {}, std::string_view boundary = "XyZ") {
    outcome out;
    multipart_stream parser(boundary, limits);
    std::size_t from = 0;
    std::size_t cut_index = 0;
    std::string piece;  // each piece in its own buffer, overwritten by the next one
    for (;;) {
        const event e = parser.next();
        switch (e) {
            case event::need_more: {
                if (from == body.size()) {
                    parser.finish();
                    break;
                }
                const std::size_t to = cut_index < cuts.size() ? cuts[cut_index++] : body.size();
                piece.assign(body.substr(from, to - from));
                from = to;
                parser.feed(piece);
                break;
            }
            case event::part: {
                auto& p = out.parts.emplace_back();
                p.name = parser.part().name;
                p.has_filename = parser.part().has_filename;
                p.filename = parser.part().filename;
                p.content_type = parser.part().content_type;
                CHECK(parser.part().data.empty());
                break;
            }
            case event::data:
                REQUIRE_FALSE(out.parts.empty());
                CHECK_FALSE(parser.data().empty());
                out.parts.back().data.append(parser.data());
                ++out.data_events;
                break;
            case event::part_end:
                REQUIRE_FALSE(out.parts.empty());
                out.parts.back().complete = true;
                break;
            case event::end:
                return out;
            case event::failed:
                out.status = parser.status();
                out.message = parser.message();
                CHECK_FALSE(out.message.empty());
                return out;
        }
    }
}

outcome whole(std::string_view body, const multipart_limits& limits = {},
              std::string_view boundary = "XyZ") {
    outcome out;
    std::vector<multipart_part> parts;
    out.status = parse_multipart(body, boundary, limits, parts, &out.message);
    for (const auto& p : parts) {
        out.parts.push_back(
            {p.name, p.has_filename, p.filename, p.content_type, std::string(p.data), true});
    }
    return out;
}

std::vector<part_copy> complete_parts(const outcome& o) {
    std::vector<part_copy> out;
    for (const auto& p : o.parts) {
        if (p.complete) out.push_back(p);
    }
    return out;
}

// The streamed parser agrees with parse_multipart on `body` cut at `cuts`: the same status
// (but for the two intended differences) and the same complete parts.
void agrees(std::string_view body, const std::vector<std::size_t>& cuts,
            const multipart_limits& limits = {}) {
    const outcome w = whole(body, limits);
    const outcome s = stream(body, cuts, limits);
    INFO("body: " << body << "\nwhole: " << w.message << "\nstreamed: " << s.message);
    if (s.status == multipart_status::header_too_large) {
        CHECK(w.status == multipart_status::malformed);
        CHECK(w.message == s.message);
    } else if (s.status == multipart_status::file_too_large &&
               w.status == multipart_status::malformed) {
        // Refused as the file passed the limit; the whole parser read on to a later fault.
    } else {
        CHECK(s.status == w.status);
    }
    CHECK(complete_parts(s) == w.parts);
}

// Every single cut, then pieces of 1, 2, 3 and 7 bytes.
void agrees_at_every_split(std::string_view body, const multipart_limits& limits = {}) {
    for (std::size_t at = 0; at <= body.size(); ++at) agrees(body, {at}, limits);
    for (const std::size_t step :
         {std::size_t{1}, std::size_t{2}, std::size_t{3}, std::size_t{7}}) {
        std::vector<std::size_t> cuts;
        for (std::size_t at = step; at < body.size(); at += step) cuts.push_back(at);
        agrees(body, cuts, limits);
    }
}

const std::string two_files_and_a_field = lines({
    "preamble, ignored",
    "--XyZ",
    "Content-Disposition: form-data; name=\"title\"",
    "",
    "Hello, world",
    "--XyZ",
    "Content-Disposition: form-data; name=\"a\"; filename=\"../a.bin\"",
    "Content-Type: application/octet-stream",
    "",
    "A\r\n--Xy\r\n-\r\rA",
    "--XyZ \t",
    "Content-Disposition: form-data; name=\"b\"; filename*=UTF-8''b%C3%A9.txt",
    "",
    "",
    "--XyZ",
    "Content-Disposition: form-data; name=\"empty\"",
    "",
    "--XyZ--",
    "epilogue --XyZ",
});

}  // namespace

TEST_CASE("multipart stream: parts, their headers and data come as events", "[multipart-stream]") {
    const outcome o = stream(two_files_and_a_field, {});
    REQUIRE(o.status == multipart_status::ok);
    REQUIRE(o.parts.size() == 4);
    CHECK(o.parts[0].name == "title");
    CHECK(o.parts[0].data == "Hello, world");
    CHECK(o.parts[1].has_filename);
    CHECK(o.parts[1].filename == "../a.bin");
    CHECK(o.parts[1].content_type == "application/octet-stream");
    CHECK(o.parts[1].data == "A\r\n--Xy\r\n-\r\rA");
    CHECK(o.parts[2].filename == "b\xC3\xA9.txt");
    CHECK(o.parts[2].content_type == "text/plain");
    CHECK(o.parts[2].data.empty());
    CHECK(o.parts[3].name == "empty");
    CHECK(o.parts[3].data.empty());
    for (const auto& p : o.parts) CHECK(p.complete);
}

TEST_CASE("multipart stream: every split position of a small body gives the same parts",
          "[multipart-stream]") {
    agrees_at_every_split(two_files_and_a_field);
    const outcome once = stream(two_files_and_a_field, {});
    for (std::size_t at = 0; at <= two_files_and_a_field.size(); ++at) {
        INFO(at);
        const outcome split = stream(two_files_and_a_field, {at});
        REQUIRE(split.status == multipart_status::ok);
        CHECK(split.parts == once.parts);
    }
}

TEST_CASE("multipart stream: a delimiter split across two pieces at any byte is found",
          "[multipart-stream]") {
    const std::string body = "--XyZ\r\nContent-Disposition: form-data; name=\"f\"\r\n\r\n" +
                             std::string(100, 'd') + "\r\n--XyZ--";
    const std::size_t delimiter_at = body.size() - std::string("\r\n--XyZ--").size();
    for (std::size_t at = delimiter_at; at <= body.size(); ++at) {
        INFO(at);
        const outcome o = stream(body, {at});
        REQUIRE(o.status == multipart_status::ok);
        REQUIRE(o.parts.size() == 1);
        CHECK(o.parts[0].data == std::string(100, 'd'));
    }
}

TEST_CASE("multipart stream: what looks like a delimiter across pieces is given back as data",
          "[multipart-stream]") {
    // The first piece ends in a partial delimiter; the next shows it was data.
    const std::string head = "--XyZ\r\nContent-Disposition: form-data; name=\"f\"\r\n\r\n";
    const std::string body = head + "abc\r\n--XyQ tail\r\n--XyZ--";
    const outcome o = stream(body, {head.size() + 9});  // cut after "abc\r\n--Xy"
    REQUIRE(o.status == multipart_status::ok);
    REQUIRE(o.parts.size() == 1);
    CHECK(o.parts[0].data == "abc\r\n--XyQ tail");
}

TEST_CASE("multipart stream: the parser holds back at most a delimiter's length of data",
          "[multipart-stream]") {
    const std::string head = "--XyZ\r\nContent-Disposition: form-data; name=\"f\"\r\n\r\n";
    multipart_stream parser("XyZ", {});
    const std::string first = head + std::string(1000, 'x') + "\r\n--Xy";
    parser.feed(first);
    REQUIRE(parser.next() == event::part);
    std::size_t given = 0;
    event e;
    while ((e = parser.next()) == event::data) given += parser.data().size();
    REQUIRE(e == event::need_more);
    CHECK(given == 1000);  // all but the 6 bytes that may start the delimiter
    const std::string second = "z";
    parser.feed(second);
    std::string after;
    while ((e = parser.next()) == event::data) after.append(parser.data());
    CHECK(after == "\r\n--Xyz");
    CHECK(e == event::need_more);
}

TEST_CASE("multipart stream: data of a large part comes in a few events per piece",
          "[multipart-stream]") {
    std::string data;
    for (int i = 0; i < 100'000; ++i) data += static_cast<char>('a' + i % 26);
    const std::string body =
        "--XyZ\r\nContent-Disposition: form-data; name=\"f\"; filename=\"x\"\r\n\r\n" + data +
        "\r\n--XyZ--";
    std::vector<std::size_t> cuts;
    for (std::size_t at = 16384; at < body.size(); at += 16384) cuts.push_back(at);
    const outcome o = stream(body, cuts);
    REQUIRE(o.status == multipart_status::ok);
    CHECK(o.parts[0].data == data);
    CHECK(o.data_events <= 2 * (cuts.size() + 1));
}

TEST_CASE("multipart stream: the whole-body parser's bodies are read alike, split anywhere",
          "[multipart-stream]") {
    const std::string head = "--XyZ\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\n";
    const std::vector<std::string> bodies = {
        std::string(""),
        std::string("just some text"),
        std::string("--XyY\r\n"),
        std::string("--XyZ--\r\n"),
        std::string("--XyZ--"),
        std::string("--XyZ"),
        std::string("--XyZ\r\n"),
        std::string("--XyZ-x"),
        std::string("--XyZ \r"),
        std::string("--XyZ x\r\n"),
        head + "value",
        head + "value\r\n",
        head + "value\r\n--XyZ",
        head + "value\r\n--XyZ  ",
        head + "value\r\n--XyZ-",
        head + "value\r\n--XyZ\r\n",
        head + "v\r\n--XyZabc\r\nafter\r\n--XyZ--",
        "x" + head + "v\r\n--XyZ--",
        "\r\n" + head + "v\r\n--XyZ--",
        head + "--XyZ--",
        head + "\r\n--XyZ--",
        "--XyZ\r\nContent-Disposition: form-data; name=\"a\"\r\n",
        "--XyZ\r\nContent-Disposition: form-data; name=\"a\"\nv\r\n--XyZ--",
        "--XyZ\r\nContent-Disposition: form-data; name=\"a\"\r\n\nv\r\n--XyZ--",
        "--XyZ\r\nContent-Disposition: form-data;\r name=\"a\"\r\n\r\nv\r\n--XyZ--",
        "--XyZ\r\nContent-Disposition: form-data;\r\n name=\"a\"\r\n\r\nv\r\n--XyZ--",
        "--XyZ\r\nContent-Type: text/plain\r\n\r\nv\r\n--XyZ--",
        "--XyZ\r\nContent-Disposition: attachment; name=\"a\"\r\n\r\nv\r\n--XyZ--",
        "--XyZ\r\nContent-Disposition: form-data; name=\"a\"\r\nContent-Disposition: "
        "form-data; name=\"b\"\r\n\r\nv\r\n--XyZ--",
        "--XyZ\r\nContent-Disposition: form-data; filename=\"f\"\r\n\r\nv\r\n--XyZ--",
        "--XyZ\r\nContent-Disposition: form-data; name=\"a\"; filename*=bad\r\n\r\nv\r\n"
        "--XyZ--",
        "--XyZ\r\nContent-Disposition: form-data; name=\"a\"; filename=\"\"\r\n\r\n\r\n"
        "--XyZ--",
        "--XyZ\r\ncontent-disposition: Form-Data; NAME=\"a\"; FileName=\"f.txt\"\r\n"
        "CONTENT-TYPE: image/png\r\nX-Other: 1\r\n\r\nPNG\r\n--XyZ--",
        "--XyZ\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\nabc\r\r\n--XyZ\r\n"
        "Content-Disposition: form-data; name=\"b\"\r\n\r\n\r\n\r\n--XyZ--\r\n",
    };
    for (const std::string& body : bodies) {
        agrees_at_every_split(body);
    }
}

TEST_CASE("multipart stream: more than max_parts parts is too_many_parts", "[multipart-stream]") {
    std::string body;
    for (int i = 0; i < 3; ++i) {
        body += "--XyZ\r\nContent-Disposition: form-data; name=\"p" + std::to_string(i) +
                "\"\r\n\r\nv\r\n";
    }
    body += "--XyZ--\r\n";
    multipart_limits limits;
    limits.max_parts = 3;
    CHECK(stream(body, {}, limits).status == multipart_status::ok);
    limits.max_parts = 2;
    const outcome o = stream(body, {}, limits);
    CHECK(o.status == multipart_status::too_many_parts);
    CHECK(o.message == "multipart body has more than 2 parts");
    CHECK(complete_parts(o).size() == 2);
    agrees_at_every_split(body, limits);
}

TEST_CASE("multipart stream: part headers over max_part_header_size are header_too_large",
          "[multipart-stream]") {
    const std::string block = lines({"Content-Disposition: form-data; name=\"a\"", ""});
    const std::string body = "--XyZ\r\n" + block + "v\r\n--XyZ--";
    multipart_limits limits;
    limits.max_part_header_size = block.size();
    CHECK(stream(body, {}, limits).status == multipart_status::ok);
    limits.max_part_header_size = block.size() - 1;
    const outcome o = stream(body, {}, limits);
    CHECK(o.status == multipart_status::header_too_large);
    CHECK(o.message ==
          "part headers are larger than " + std::to_string(block.size() - 1) + " bytes");
    agrees_at_every_split(body, limits);
}

TEST_CASE("multipart stream: endless part headers are refused at the limit, not held",
          "[multipart-stream]") {
    multipart_stream parser("XyZ", {});
    const std::string start = "--XyZ\r\nX-Long: ";
    parser.feed(start);
    CHECK(parser.next() == event::need_more);
    const std::string more(1024, 'h');
    event e = event::need_more;
    int pieces = 0;
    while (e == event::need_more && pieces < 100) {
        parser.feed(more);
        e = parser.next();
        ++pieces;
    }
    CHECK(e == event::failed);
    CHECK(parser.status() == multipart_status::header_too_large);
    CHECK(pieces == 8);
}

TEST_CASE("multipart stream: a file over max_file_size fails as its bytes pass the limit",
          "[multipart-stream]") {
    multipart_limits limits;
    limits.max_file_size = 10;
    multipart_stream parser("XyZ", limits);
    const std::string head =
        "--XyZ\r\nContent-Disposition: form-data; name=\"f\"; filename=\"../big.bin\"\r\n\r\n";
    parser.feed(head);
    REQUIRE(parser.next() == event::part);
    REQUIRE(parser.next() == event::need_more);
    const std::string ten(10, 'b');
    parser.feed(ten);
    REQUIRE(parser.next() == event::data);
    REQUIRE(parser.next() == event::need_more);
    const std::string one = "b";  // no delimiter in sight: the body is not complete
    parser.feed(one);
    REQUIRE(parser.next() == event::failed);
    CHECK(parser.status() == multipart_status::file_too_large);
    CHECK(parser.message() == "file 'big.bin' is larger than 10 bytes");
    CHECK(parser.next() == event::failed);  // it stays failed
}

TEST_CASE("multipart stream: a file exactly max_file_size long and a long field pass",
          "[multipart-stream]") {
    multipart_limits limits;
    limits.max_file_size = 5;
    const std::string body = lines({
        "--XyZ",
        "Content-Disposition: form-data; name=\"f\"; filename=\"x\"",
        "",
        "12345",
        "--XyZ",
        "Content-Disposition: form-data; name=\"field\"",
        "",
        "a field longer than the file limit",
        "--XyZ",
        "Content-Disposition: form-data; name=\"g\"; filename=\"y\"",
        "",
        "123456",
        "--XyZ--",
    });
    const outcome o = stream(body, {}, limits);
    CHECK(o.status == multipart_status::file_too_large);
    CHECK(complete_parts(o).size() == 2);
    agrees_at_every_split(body, limits);
}

TEST_CASE("multipart stream: an empty boundary is malformed", "[multipart-stream]") {
    multipart_stream parser("", {});
    CHECK(parser.next() == event::failed);
    CHECK(parser.status() == multipart_status::malformed);
}

TEST_CASE("multipart stream: the epilogue is ignored to the body's end", "[multipart-stream]") {
    multipart_stream parser("XyZ", {});
    const std::string body = "--XyZ--\r\n";
    parser.feed(body);
    CHECK(parser.next() == event::need_more);
    const std::string epilogue = "--XyZ\r\nanything at all";
    parser.feed(epilogue);
    CHECK(parser.next() == event::need_more);
    parser.finish();
    CHECK(parser.next() == event::end);
    CHECK(parser.next() == event::end);
}

TEST_CASE("multipart stream: many near-delimiters are scanned in linear time",
          "[multipart-stream]") {
    std::string data;
    for (int i = 0; i < 200'000; ++i) data += "\r\n--Xy";
    const std::string body =
        "--XyZ\r\nContent-Disposition: form-data; name=\"f\"\r\n\r\n" + data + "\r\n--XyZ--";
    std::vector<std::size_t> cuts;
    for (std::size_t at = 4093; at < body.size(); at += 4093) cuts.push_back(at);
    const outcome o = stream(body, cuts);
    REQUIRE(o.status == multipart_status::ok);
    CHECK(o.parts[0].data == data);
}

}  // namespace unit_test_web_multipart_stream

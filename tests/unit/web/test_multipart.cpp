// multipart/form-data bodies (RFC 7578, framing per RFC 2046 5.1).

#include "web/multipart.hpp"

#include <catch2/catch.hpp>

#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace unit_test_web_multipart {

using tern::detail::multipart_boundary;
using tern::detail::multipart_limits;
using tern::detail::multipart_part;
using tern::detail::multipart_status;
using tern::detail::parse_multipart;
using tern::detail::safe_filename;

namespace {

/// The lines joined with CRLF, each line ended by one.
std::string lines(std::initializer_list<std::string_view> ls) {
    std::string out;
    for (auto l : ls) {
        out.append(l);
        out += "\r\n";
    }
    return out;
}

/// A parse of a body the result owns, so that the parts' views outlive the caller's
/// temporaries (the body sits on the heap and keeps its address when the result moves).
struct parse_result {
    std::unique_ptr<const std::string> body;
    multipart_status status = multipart_status::ok;
    std::vector<multipart_part> parts;
    std::string message;
};

/// Parses `body` with boundary "XyZ".
parse_result parse(std::string body, const multipart_limits& limits = {}) {
    parse_result r;
    r.body = std::make_unique<const std::string>(std::move(body));
    r.status = parse_multipart(*r.body, "XyZ", limits, r.parts, &r.message);
    return r;
}

/// A body with one part named "f" whose data is `data`.
std::string one_part(std::string_view data, std::string_view disposition = "name=\"f\"") {
    std::string body = "--XyZ\r\nContent-Disposition: form-data; ";
    body.append(disposition);
    body += "\r\n\r\n";
    body.append(data);
    body += "\r\n--XyZ--\r\n";
    return body;
}

/// A body with one part whose header block is `headers` (each line CRLF-ended by the
/// caller) and data "v".
std::string with_headers(std::string_view headers) {
    std::string body = "--XyZ\r\n";
    body.append(headers);
    body += "\r\nv\r\n--XyZ--\r\n";
    return body;
}

}  // namespace

// ---- multipart_boundary -------------------------------------------------------------------

TEST_CASE("multipart: the boundary is read from a form-data Content-Type", "[multipart]") {
    CHECK(multipart_boundary("multipart/form-data; boundary=----WebKitFormBoundary7MA4YWxk") ==
          "----WebKitFormBoundary7MA4YWxk");
    CHECK(multipart_boundary("multipart/form-data;boundary=abc") == "abc");
    CHECK(multipart_boundary("multipart/form-data ;  boundary=abc  ") == "abc");
}

TEST_CASE("multipart: type and parameter name compare case-insensitively, the value does not",
          "[multipart]") {
    CHECK(multipart_boundary("Multipart/Form-Data; BOUNDARY=AbC") == "AbC");
}

TEST_CASE("multipart: a quoted boundary is unquoted and may use every bchar", "[multipart]") {
    CHECK(multipart_boundary("multipart/form-data; boundary=\"a b'()+_,-./:=?Z9\"") ==
          "a b'()+_,-./:=?Z9");
    CHECK(multipart_boundary("multipart/form-data; boundary=\"a\\bc\"") == "abc");
}

TEST_CASE("multipart: other parameters around the boundary are skipped", "[multipart]") {
    CHECK(multipart_boundary("multipart/form-data; charset=utf-8; boundary=x; q=\"a;b\"") == "x");
    CHECK(multipart_boundary("multipart/form-data; ; boundary=x;") == "x");
}

TEST_CASE("multipart: a boundary of 70 characters is the longest accepted", "[multipart]") {
    const std::string b70(70, 'b');
    CHECK(multipart_boundary("multipart/form-data; boundary=" + b70) == b70);
    CHECK_FALSE(multipart_boundary("multipart/form-data; boundary=" + b70 + "b"));
}

TEST_CASE("multipart: no boundary comes from another type or a bad parameter", "[multipart]") {
    for (std::string_view bad : {
             "",
             "text/plain; boundary=x",
             "multipart/mixed; boundary=x",
             "multipart/form-data-x; boundary=x",
             "multipart/form-data",
             "multipart/form-data;",
             "multipart/form-data; charset=utf-8",
             "multipart/form-data; boundary=",
             "multipart/form-data; boundary=\"\"",
             "multipart/form-data; boundary=\"abc \"",  // may not end in a space
             "multipart/form-data; boundary=\"a@b\"",   // '@' is no bchar
             "multipart/form-data; boundary=a#b",       // '#' is a tchar but no bchar
             "multipart/form-data; boundary=a/b",       // unquoted '/' ends the token
             "multipart/form-data; boundary=\"abc",     // unterminated
             "multipart/form-data; boundary = x",
             "multipart/form-data; boundary=x; boundary=y",
             "multipart/form-data; boundary=x y",
             "multipart/form-data boundary=x",
         }) {
        INFO(bad);
        CHECK_FALSE(multipart_boundary(bad));
    }
}

// ---- parse_multipart: framing -------------------------------------------------------------

TEST_CASE("multipart: several fields and files come back in order", "[multipart]") {
    const std::string body = lines({
        "--XyZ",
        "Content-Disposition: form-data; name=\"title\"",
        "",
        "Hello, world",
        "--XyZ",
        "Content-Disposition: form-data; name=\"avatar\"; filename=\"me.png\"",
        "Content-Type: image/png",
        "",
        "PNGDATA",
        "--XyZ",
        "Content-Disposition: form-data; name=\"notes\"; filename=\"notes.txt\"",
        "",
        "line one",
        "line two",
        "--XyZ",
        "Content-Disposition: form-data; name=\"title\"",
        "",
        "",
        "--XyZ--",
    });
    const auto r = parse(body);
    REQUIRE(r.status == multipart_status::ok);
    REQUIRE(r.parts.size() == 4);

    CHECK(r.parts[0].name == "title");
    CHECK_FALSE(r.parts[0].has_filename);
    CHECK(r.parts[0].filename.empty());
    CHECK(r.parts[0].content_type == "text/plain");
    CHECK(r.parts[0].data == "Hello, world");

    CHECK(r.parts[1].name == "avatar");
    CHECK(r.parts[1].has_filename);
    CHECK(r.parts[1].filename == "me.png");
    CHECK(r.parts[1].content_type == "image/png");
    CHECK(r.parts[1].data == "PNGDATA");

    CHECK(r.parts[2].name == "notes");
    CHECK(r.parts[2].filename == "notes.txt");
    CHECK(r.parts[2].content_type == "text/plain");
    CHECK(r.parts[2].data == "line one\r\nline two");

    CHECK(r.parts[3].name == "title");
    CHECK(r.parts[3].data.empty());
}

TEST_CASE("multipart: part data views the body without copying", "[multipart]") {
    const std::string body = one_part("payload");
    std::vector<multipart_part> out;
    REQUIRE(parse_multipart(body, "XyZ", {}, out) == multipart_status::ok);
    REQUIRE(out.size() == 1);
    CHECK(out[0].data.data() == body.data() + body.find("payload"));
    CHECK(out[0].data.size() == 7);
}

TEST_CASE("multipart: parts are appended after what the vector already holds", "[multipart]") {
    const std::string body = one_part("x");
    std::vector<multipart_part> out(1);
    out[0].name = "earlier";
    REQUIRE(parse_multipart(body, "XyZ", {}, out) == multipart_status::ok);
    REQUIRE(out.size() == 2);
    CHECK(out[0].name == "earlier");
    CHECK(out[1].data == "x");
}

TEST_CASE("multipart: binary data with CR, LF, NUL and near-boundaries is kept intact",
          "[multipart]") {
    std::string data;
    for (int i = 0; i < 256; ++i) data += static_cast<char>(i);
    data += std::string("\0\r\n\0", 4);
    data += "\r\n--Xy";   // a delimiter cut short
    data += "\r\n-";      // only a dash
    data += "x--XyZ";     // the boundary not at the start of a line
    data += "\n--XyZ";    // after a bare LF
    data += "\r--XyZ";    // after a bare CR
    data += "\r\n--xyz";  // in another case
    data += "\r\r\n\r\n--X";
    data += "\r\n";  // data may end with a line break of its own

    const std::string body = one_part(data, "name=\"bin\"; filename=\"b.bin\"");
    const auto r = parse(body);
    INFO(r.message);
    REQUIRE(r.status == multipart_status::ok);
    REQUIRE(r.parts.size() == 1);
    CHECK(r.parts[0].data == data);
}

TEST_CASE("multipart: data ending in CR or CRLF keeps it", "[multipart]") {
    auto r = parse(one_part("abc\r"));
    REQUIRE(r.status == multipart_status::ok);
    CHECK(r.parts[0].data == "abc\r");
    r = parse(one_part("abc\r\n"));
    REQUIRE(r.status == multipart_status::ok);
    CHECK(r.parts[0].data == "abc\r\n");
}

TEST_CASE("multipart: the boundary as the start of a longer line is malformed", "[multipart]") {
    // RFC 2046 5.1.1: a boundary may not begin any line of the data.
    const auto r = parse(one_part("before\r\n--XyZabc\r\nafter"));
    CHECK(r.status == multipart_status::malformed);
    CHECK_FALSE(r.message.empty());
}

TEST_CASE("multipart: a preamble and an epilogue are ignored", "[multipart]") {
    const std::string body = "This is the preamble.\r\nIt has --XyZ in it too.\r\n" +
                             one_part("value") + "This is the epilogue.\r\n--XyZ\r\n";
    const auto r = parse(body);
    REQUIRE(r.status == multipart_status::ok);
    REQUIRE(r.parts.size() == 1);
    CHECK(r.parts[0].data == "value");
}

TEST_CASE("multipart: the boundary inside a preamble line is not a delimiter", "[multipart]") {
    // "x--XyZ" does not start a line, so the first delimiter is the closing one.
    const std::string body = "x" + one_part("value");
    const auto r = parse(body);
    REQUIRE(r.status == multipart_status::ok);
    CHECK(r.parts.empty());
}

TEST_CASE("multipart: transport padding after a delimiter is allowed", "[multipart]") {
    const std::string body = lines({
        "--XyZ \t ",
        "Content-Disposition: form-data; name=\"a\"",
        "",
        "1",
        "--XyZ\t",
        "Content-Disposition: form-data; name=\"b\"",
        "",
        "2",
        "--XyZ--",
    });
    const auto r = parse(body);
    INFO(r.message);
    REQUIRE(r.status == multipart_status::ok);
    REQUIRE(r.parts.size() == 2);
    CHECK(r.parts[0].data == "1");
    CHECK(r.parts[1].data == "2");
}

TEST_CASE("multipart: the close delimiter needs no line end after it", "[multipart]") {
    std::string body = one_part("v");
    body.resize(body.size() - 2);
    const auto r = parse(body);
    REQUIRE(r.status == multipart_status::ok);
    CHECK(r.parts.size() == 1);
}

TEST_CASE("multipart: a body that is only the close delimiter has no parts", "[multipart]") {
    const auto r = parse("--XyZ--\r\n");
    CHECK(r.status == multipart_status::ok);
    CHECK(r.parts.empty());
}

TEST_CASE("multipart: a part with no line between headers and delimiter has no data",
          "[multipart]") {
    // RFC 2046 5.1.1: body-part := MIME-part-headers [CRLF *OCTET]; the CRLF ending the
    // headers is then the start of the next delimiter.
    const std::string body =
        "--XyZ\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\n--XyZ\r\n"
        "Content-Disposition: form-data; name=\"b\"\r\n\r\nB\r\n--XyZ--";
    const auto r = parse(body);
    INFO(r.message);
    REQUIRE(r.status == multipart_status::ok);
    REQUIRE(r.parts.size() == 2);
    CHECK(r.parts[0].data.empty());
    CHECK(r.parts[1].data == "B");
}

TEST_CASE("multipart: an empty body is malformed", "[multipart]") {
    const auto r = parse("");
    CHECK(r.status == multipart_status::malformed);
    CHECK(r.message == "multipart body has no opening boundary");
}

TEST_CASE("multipart: a body without the boundary is malformed", "[multipart]") {
    CHECK(parse("just some text").status == multipart_status::malformed);
    CHECK(parse("--XyY\r\n").status == multipart_status::malformed);
}

TEST_CASE("multipart: an empty boundary is malformed", "[multipart]") {
    std::vector<multipart_part> out;
    CHECK(parse_multipart("--\r\n\r\n----", "", {}, out) == multipart_status::malformed);
}

TEST_CASE("multipart: a missing close delimiter is malformed", "[multipart]") {
    const std::string head = "--XyZ\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\n";
    for (const std::string& body : {
             head + "value",
             head + "value\r\n",
             head + "value\r\n--XyZ",
             head + "value\r\n--XyZ  ",
             head + "value\r\n--XyZ-",
             head + "value\r\n--XyZ\r\n",
             std::string("--XyZ"),
             std::string("--XyZ\r\n"),
         }) {
        INFO(body);
        const auto r = parse(body);
        CHECK(r.status == multipart_status::malformed);
        CHECK_FALSE(r.message.empty());
    }
    CHECK(parse(head + "value").message == "multipart body has no closing boundary");
}

TEST_CASE("multipart: parts read before an error are kept", "[multipart]") {
    const std::string body = lines({
        "--XyZ",
        "Content-Disposition: form-data; name=\"good\"",
        "",
        "1",
        "--XyZ",
        "Content-Type: text/plain",
        "",
        "2",
        "--XyZ--",
    });
    const auto r = parse(body);
    CHECK(r.status == multipart_status::malformed);
    REQUIRE(r.parts.size() == 1);
    CHECK(r.parts[0].name == "good");
}

TEST_CASE("multipart: a null message pointer is allowed", "[multipart]") {
    std::vector<multipart_part> out;
    CHECK(parse_multipart("", "XyZ", {}, out, nullptr) == multipart_status::malformed);
    CHECK(parse_multipart(one_part("v"), "XyZ", {}, out, nullptr) == multipart_status::ok);
}

TEST_CASE("multipart: a long boundary with spaces frames parts", "[multipart]") {
    const std::string b = "a b'()+_,-./:=?" + std::string(55, 'z');
    REQUIRE(b.size() == 70);
    const std::string body =
        "--" + b + "\r\nContent-Disposition: form-data; name=\"x\"\r\n\r\n" + "1\r\n--" + b + "--";
    std::vector<multipart_part> out;
    REQUIRE(parse_multipart(body, b, {}, out) == multipart_status::ok);
    REQUIRE(out.size() == 1);
    CHECK(out[0].data == "1");
}

// ---- parse_multipart: part headers --------------------------------------------------------

TEST_CASE("multipart: header names and form-data compare case-insensitively", "[multipart]") {
    const auto r = parse(with_headers(lines({
        "content-disposition: Form-Data; NAME=\"a\"; FileName=\"f.txt\"",
        "CONTENT-TYPE: application/octet-stream",
    })));
    INFO(r.message);
    REQUIRE(r.status == multipart_status::ok);
    REQUIRE(r.parts.size() == 1);
    CHECK(r.parts[0].name == "a");
    CHECK(r.parts[0].filename == "f.txt");
    CHECK(r.parts[0].content_type == "application/octet-stream");
}

TEST_CASE("multipart: header values lose surrounding whitespace", "[multipart]") {
    const auto r = parse(with_headers(lines({
        "Content-Disposition:form-data;name=a",
        "Content-Type: \t text/csv; charset=utf-8 \t",
    })));
    INFO(r.message);
    REQUIRE(r.status == multipart_status::ok);
    CHECK(r.parts[0].name == "a");
    CHECK(r.parts[0].content_type == "text/csv; charset=utf-8");
}

TEST_CASE("multipart: other part headers are ignored", "[multipart]") {
    const auto r = parse(with_headers(lines({
        "X-Custom: 1",
        "Content-Disposition: form-data; name=\"a\"",
        "Content-Transfer-Encoding: binary",
    })));
    REQUIRE(r.status == multipart_status::ok);
    CHECK(r.parts[0].name == "a");
}

TEST_CASE("multipart: a quoted name unescapes backslashes, a token name is taken as is",
          "[multipart]") {
    auto r = parse(one_part("v", R"(name="a\"b\\c;d=e")"));
    REQUIRE(r.status == multipart_status::ok);
    CHECK(r.parts[0].name == R"(a"b\c;d=e)");

    r = parse(one_part("v", "name=plain_token.1"));
    REQUIRE(r.status == multipart_status::ok);
    CHECK(r.parts[0].name == "plain_token.1");

    r = parse(one_part("v", "name=\"caf\xC3\xA9\""));
    REQUIRE(r.status == multipart_status::ok);
    CHECK(r.parts[0].name == "caf\xC3\xA9");
}

TEST_CASE("multipart: an empty quoted name is a name", "[multipart]") {
    const auto r = parse(one_part("v", "name=\"\""));
    REQUIRE(r.status == multipart_status::ok);
    CHECK(r.parts[0].name.empty());
}

TEST_CASE("multipart: unknown disposition parameters are ignored", "[multipart]") {
    const auto r = parse(one_part("v", "size=10; name=\"a\"; creation-date=\"x\""));
    REQUIRE(r.status == multipart_status::ok);
    CHECK(r.parts[0].name == "a");
}

TEST_CASE("multipart: a part without a name is malformed", "[multipart]") {
    const auto r = parse(one_part("v", "filename=\"f.txt\""));
    CHECK(r.status == multipart_status::malformed);
    CHECK(r.message == "part has no name");
    CHECK(parse(with_headers(lines({"Content-Disposition: form-data"}))).status ==
          multipart_status::malformed);
}

TEST_CASE("multipart: a part without Content-Disposition is malformed", "[multipart]") {
    auto r = parse(with_headers(lines({"Content-Type: text/plain"})));
    CHECK(r.status == multipart_status::malformed);
    CHECK(r.message == "part has no Content-Disposition");
    r = parse(with_headers(""));  // no headers at all
    CHECK(r.status == multipart_status::malformed);
}

TEST_CASE("multipart: a disposition other than form-data is malformed", "[multipart]") {
    for (std::string_view d : {"attachment; name=\"a\"", "inline; name=\"a\"",
                               "form-data-x; name=\"a\"", "; name=\"a\""}) {
        INFO(d);
        const std::string header = "Content-Disposition: " + std::string(d);
        CHECK(parse(with_headers(lines({header}))).status == multipart_status::malformed);
    }
}

TEST_CASE("multipart: bad Content-Disposition parameter syntax is malformed", "[multipart]") {
    for (std::string_view d : {
             "name=\"a",        // unterminated quoted-string
             "name=\"a\\",      // backslash at the end
             "name=",           // no value
             "name",            // no '='
             "name = \"a\"",    // whitespace around '='
             "name=\"a\" x",    // junk after the value
             "name=a b",        // a token value with a space
             "name=\"a\x01\"",  // a control character inside quotes
             "name=\"a\"; name=\"b\"",
             "name=\"a\"; filename=\"x\"; filename=\"y\"",
         }) {
        INFO(d);
        const auto r = parse(one_part("v", d));
        CHECK(r.status == multipart_status::malformed);
        CHECK_FALSE(r.message.empty());
    }
}

TEST_CASE("multipart: two Content-Disposition or Content-Type headers are malformed",
          "[multipart]") {
    CHECK(parse(with_headers(lines({
                    "Content-Disposition: form-data; name=\"a\"",
                    "Content-Disposition: form-data; name=\"b\"",
                })))
              .status == multipart_status::malformed);
    CHECK(parse(with_headers(lines({
                    "Content-Disposition: form-data; name=\"a\"",
                    "Content-Type: text/plain",
                    "Content-Type: image/png",
                })))
              .status == multipart_status::malformed);
}

TEST_CASE("multipart: a header line without a colon is malformed", "[multipart]") {
    const auto r = parse(with_headers(lines({
        "Content-Disposition: form-data; name=\"a\"",
        "Content-Type text/plain",
    })));
    CHECK(r.status == multipart_status::malformed);
    CHECK(r.message == "part header line has no colon");
}

TEST_CASE("multipart: a header name that is not a token is malformed", "[multipart]") {
    CHECK(parse(with_headers(lines({"Content-Disposition : form-data; name=\"a\""}))).status ==
          multipart_status::malformed);
    CHECK(
        parse(with_headers(lines({"Content-Disposition: form-data; name=\"a\"", ": x"}))).status ==
        multipart_status::malformed);
}

TEST_CASE("multipart: a control character in a header value is malformed", "[multipart]") {
    CHECK(parse(one_part("v", std::string_view("name=\"a\"\0", 9))).status ==
          multipart_status::malformed);
    CHECK(parse(with_headers(lines({"Content-Disposition: form-data; name=\"a\"",
                                    "Content-Type: text/plain\x7F"})))
              .status == multipart_status::malformed);
}

TEST_CASE("multipart: LF-only line ends are malformed", "[multipart]") {
    const std::string body =
        "--XyZ\nContent-Disposition: form-data; name=\"a\"\n\nvalue\n--XyZ--\n";
    CHECK(parse(body).status == multipart_status::malformed);

    // CRLF framing, but one header line ends in a bare LF.
    const auto r = parse(
        with_headers("Content-Disposition: form-data; name=\"a\"\nContent-Type: text/plain\r\n"));
    CHECK(r.status == multipart_status::malformed);
    CHECK(r.message == "part header line does not end in CRLF");

    // The empty line ending the headers is a bare LF.
    CHECK(parse("--XyZ\r\nContent-Disposition: form-data; name=\"a\"\r\n\nv\r\n--XyZ--").status ==
          multipart_status::malformed);
}

TEST_CASE("multipart: a bare CR inside a header line is malformed", "[multipart]") {
    CHECK(parse(with_headers(lines({"Content-Disposition: form-data;\r name=\"a\""}))).status ==
          multipart_status::malformed);
}

TEST_CASE("multipart: a folded header (obs-fold) is malformed", "[multipart]") {
    for (std::string_view fold : {" name=\"a\"", "\tname=\"a\""}) {
        const auto r = parse(with_headers(lines({"Content-Disposition: form-data;", fold})));
        CHECK(r.status == multipart_status::malformed);
        CHECK(r.message == "part header is folded (obs-fold)");
    }
}

TEST_CASE("multipart: part headers up to max_part_header_size are accepted", "[multipart]") {
    const std::string header_block = lines({"Content-Disposition: form-data; name=\"a\"", ""});
    const std::string body = "--XyZ\r\n" + header_block + "v\r\n--XyZ--";
    multipart_limits limits;
    limits.max_part_header_size = header_block.size();
    CHECK(parse(body, limits).status == multipart_status::ok);

    limits.max_part_header_size = header_block.size() - 1;
    const auto r = parse(body, limits);
    CHECK(r.status == multipart_status::malformed);
    CHECK(r.message ==
          "part headers are larger than " + std::to_string(limits.max_part_header_size) + " bytes");
}

TEST_CASE("multipart: the header limit applies to every part", "[multipart]") {
    const std::string big(200, 'x');
    const std::string body = lines({
        "--XyZ",
        "Content-Disposition: form-data; name=\"a\"",
        "",
        "1",
        "--XyZ",
        "Content-Disposition: form-data; name=\"b\"",
        "X-Padding: " + big,
        "",
        "2",
        "--XyZ--",
    });
    multipart_limits limits;
    limits.max_part_header_size = 100;
    const auto r = parse(body, limits);
    CHECK(r.status == multipart_status::malformed);
    CHECK(r.parts.size() == 1);
}

TEST_CASE("multipart: a body that ends inside part headers is malformed", "[multipart]") {
    const auto r = parse("--XyZ\r\nContent-Disposition: form-data; name=\"a\"\r\n");
    CHECK(r.status == multipart_status::malformed);
    CHECK(r.message == "multipart body ends inside part headers");
}

// ---- parse_multipart: file names ----------------------------------------------------------

TEST_CASE("multipart: the filename is kept raw, safe_filename is the caller's job", "[multipart]") {
    const auto r = parse(one_part("v", R"(name="f"; filename="..\\..\\evil \"x\".txt")"));
    REQUIRE(r.status == multipart_status::ok);
    CHECK(r.parts[0].has_filename);
    CHECK(r.parts[0].filename == R"(..\..\evil "x".txt)");
}

TEST_CASE("multipart: a backslash in a filename escapes only a quote or a backslash",
          "[multipart]") {
    // Browsers send Windows paths (old IE) and Linux names with '\\' unescaped.
    auto r = parse(one_part("v", R"(name="f"; filename="C:\Users\me\report.pdf")"));
    REQUIRE(r.status == multipart_status::ok);
    CHECK(r.parts[0].filename == R"(C:\Users\me\report.pdf)");
    CHECK(safe_filename(r.parts[0].filename) == "report.pdf");
    r = parse(one_part("v", R"(name="f"; filename="a\b.txt")"));
    REQUIRE(r.status == multipart_status::ok);
    CHECK(r.parts[0].filename == R"(a\b.txt)");
    // A quoted-pair of the boundary parameter in Content-Type is still RFC 9110's.
    CHECK(tern::detail::multipart_boundary(R"(multipart/form-data; boundary="a\bc")") == "abc");
}

TEST_CASE("multipart: an empty filename still marks a file part", "[multipart]") {
    // What browsers send for a file input left empty.
    const std::string body = lines({
        "--XyZ",
        "Content-Disposition: form-data; name=\"upload\"; filename=\"\"",
        "Content-Type: application/octet-stream",
        "",
        "",
        "--XyZ--",
    });
    const auto r = parse(body);
    REQUIRE(r.status == multipart_status::ok);
    REQUIRE(r.parts.size() == 1);
    CHECK(r.parts[0].has_filename);
    CHECK(r.parts[0].filename.empty());
    CHECK(r.parts[0].data.empty());
}

TEST_CASE("multipart: an empty file with a name parses", "[multipart]") {
    const auto r = parse(one_part("", "name=\"f\"; filename=\"empty.txt\""));
    REQUIRE(r.status == multipart_status::ok);
    CHECK(r.parts[0].filename == "empty.txt");
    CHECK(r.parts[0].data.empty());
}

TEST_CASE("multipart: filename* is decoded from UTF-8 percent form", "[multipart]") {
    auto r = parse(one_part("v", "name=\"f\"; filename*=UTF-8''na%C3%AFve%20r%c3%a9sum%C3%A9.txt"));
    REQUIRE(r.status == multipart_status::ok);
    CHECK(r.parts[0].has_filename);
    CHECK(r.parts[0].filename == "na\xC3\xAFve r\xC3\xA9sum\xC3\xA9.txt");

    r = parse(one_part("v", "name=\"f\"; filename*=utf-8'en'%E2%82%AC!#$&+-.^_`|~"));
    REQUIRE(r.status == multipart_status::ok);
    CHECK(r.parts[0].filename == "\xE2\x82\xAC!#$&+-.^_`|~");
}

TEST_CASE("multipart: filename* wins over filename, in either order", "[multipart]") {
    auto r = parse(one_part("v", "name=\"f\"; filename=\"plain.txt\"; filename*=UTF-8''fancy.txt"));
    REQUIRE(r.status == multipart_status::ok);
    CHECK(r.parts[0].filename == "fancy.txt");
    r = parse(one_part("v", "name=\"f\"; filename*=UTF-8''fancy.txt; filename=\"plain.txt\""));
    REQUIRE(r.status == multipart_status::ok);
    CHECK(r.parts[0].filename == "fancy.txt");
}

TEST_CASE("multipart: an undecodable filename* falls back to filename", "[multipart]") {
    for (std::string_view ext : {"ISO-8859-1''caf%E9.txt", "UTF-8''bad%zz", "UTF-8''cut%4",
                                 "UTF-8'nolang", "noquotes", "UTF-8''a*b"}) {
        INFO(ext);
        auto r = parse(
            one_part("v", "name=\"f\"; filename=\"fallback.txt\"; filename*=" + std::string(ext)));
        REQUIRE(r.status == multipart_status::ok);
        CHECK(r.parts[0].filename == "fallback.txt");

        r = parse(one_part("v", "name=\"f\"; filename*=" + std::string(ext)));
        CHECK(r.status == multipart_status::malformed);
    }
}

// ---- parse_multipart: limits --------------------------------------------------------------

TEST_CASE("multipart: more than max_parts parts is too_many_parts", "[multipart]") {
    std::string body;
    for (int i = 0; i < 3; ++i) {
        body += "--XyZ\r\nContent-Disposition: form-data; name=\"p" + std::to_string(i) +
                "\"\r\n\r\nv\r\n";
    }
    body += "--XyZ--\r\n";

    multipart_limits limits;
    limits.max_parts = 3;
    CHECK(parse(body, limits).status == multipart_status::ok);

    limits.max_parts = 2;
    const auto r = parse(body, limits);
    CHECK(r.status == multipart_status::too_many_parts);
    CHECK(r.message == "multipart body has more than 2 parts");
    CHECK(r.parts.size() == 2);
}

TEST_CASE("multipart: max_parts 0 refuses any part but allows an empty form", "[multipart]") {
    multipart_limits limits;
    limits.max_parts = 0;
    CHECK(parse(one_part("v"), limits).status == multipart_status::too_many_parts);
    CHECK(parse("--XyZ--", limits).status == multipart_status::ok);
}

TEST_CASE("multipart: a file over max_file_size is file_too_large", "[multipart]") {
    multipart_limits limits;
    limits.max_file_size = 4;
    const std::string body = lines({
        "--XyZ",
        "Content-Disposition: form-data; name=\"ok\"; filename=\"small.bin\"",
        "",
        "1234",
        "--XyZ",
        "Content-Disposition: form-data; name=\"big\"; filename=\"big.bin\"",
        "",
        "12345",
        "--XyZ--",
    });
    const auto r = parse(body, limits);
    CHECK(r.status == multipart_status::file_too_large);
    CHECK(r.message == "file 'big.bin' is larger than 4 bytes");
    REQUIRE(r.parts.size() == 1);
    CHECK(r.parts[0].name == "ok");
}

TEST_CASE("multipart: a file exactly max_file_size long is accepted", "[multipart]") {
    multipart_limits limits;
    limits.max_file_size = 1024 * 1024;
    const std::string data(limits.max_file_size, 'a');
    const auto r = parse(one_part(data, "name=\"f\"; filename=\"x\""), limits);
    REQUIRE(r.status == multipart_status::ok);
    CHECK(r.parts[0].data.size() == limits.max_file_size);

    const auto over = parse(one_part(data + "a", "name=\"f\"; filename=\"x\""), limits);
    CHECK(over.status == multipart_status::file_too_large);
    CHECK(over.message == "file 'x' is larger than 1048576 bytes");
}

TEST_CASE("multipart: max_file_size does not bound fields without a filename", "[multipart]") {
    multipart_limits limits;
    limits.max_file_size = 4;
    const auto r = parse(one_part(std::string(100, 'a')), limits);
    REQUIRE(r.status == multipart_status::ok);
    CHECK(r.parts[0].data.size() == 100);
}

TEST_CASE("multipart: the file_too_large message shows a safe file name", "[multipart]") {
    multipart_limits limits;
    limits.max_file_size = 1;
    const auto r = parse(one_part("12", R"(name="f"; filename="../<script>.html")"), limits);
    CHECK(r.status == multipart_status::file_too_large);
    CHECK(r.message == "file '_script_.html' is larger than 1 bytes");
}

TEST_CASE("multipart: many near-delimiters and many parts parse in linear time", "[multipart]") {
    // Each "\r\n--Xy" makes a naive scanner restart; 200k of them must stay fast.
    std::string data;
    for (int i = 0; i < 200'000; ++i) data += "\r\n--Xy";
    auto r = parse(one_part(data));
    REQUIRE(r.status == multipart_status::ok);
    CHECK(r.parts[0].data.size() == data.size());

    std::string body;
    for (int i = 0; i < 20'000; ++i)
        body += "--XyZ\r\nContent-Disposition: form-data; name=a\r\n\r\nv\r\n";
    body += "--XyZ--";
    multipart_limits limits;
    limits.max_parts = 20'000;
    r = parse(body, limits);
    REQUIRE(r.status == multipart_status::ok);
    CHECK(r.parts.size() == 20'000);
}

// ---- safe_filename ------------------------------------------------------------------------

TEST_CASE("multipart: safe_filename keeps only the last path component", "[multipart]") {
    CHECK(safe_filename("../../etc/passwd") == "passwd");
    CHECK(safe_filename("C:\\x\\y.txt") == "y.txt");
    CHECK(safe_filename("/abs/path/file.tar.gz") == "file.tar.gz");
    CHECK(safe_filename("mixed\\sep/arators\\last") == "last");
}

TEST_CASE("multipart: safe_filename gives 'upload' when nothing is left", "[multipart]") {
    for (std::string_view raw :
         {"", "..", ".", "/", "\\", "dir/", "a/..", "a\\..\\..", "...", " . . ", "   "}) {
        INFO(raw);
        CHECK(safe_filename(raw) == "upload");
    }
}

TEST_CASE("multipart: safe_filename strips leading dots and spaces only", "[multipart]") {
    CHECK(safe_filename(".hidden") == "hidden");
    CHECK(safe_filename(" . .profile") == "profile");
    CHECK(safe_filename("..\\.bashrc") == "bashrc");
    CHECK(safe_filename("report v2.final .txt") == "report v2.final .txt");
    CHECK(safe_filename("name.") == "name.");
}

TEST_CASE("multipart: safe_filename replaces control and reserved characters", "[multipart]") {
    CHECK(safe_filename("a\x01"
                        "b\nc\rd\te\x7F.txt") == "a_b_c_d_e_.txt");
    CHECK(safe_filename(std::string_view("a\0b", 3)) == "a_b");
    CHECK(safe_filename("<>:\"|?*") == "_______");
    CHECK(safe_filename("C:evil.txt") == "C_evil.txt");
    CHECK(safe_filename("ok-name_(1)[2]{3}+!@#$%&';,=~`.txt") ==
          "ok-name_(1)[2]{3}+!@#$%&';,=~`.txt");
}

TEST_CASE("multipart: safe_filename keeps UTF-8 names", "[multipart]") {
    CHECK(safe_filename("na\xC3\xAFve \xE2\x82\xAC \xF0\x9F\x98\x80.txt") ==
          "na\xC3\xAFve \xE2\x82\xAC \xF0\x9F\x98\x80.txt");
}

TEST_CASE("multipart: safe_filename cuts long names at 255 bytes", "[multipart]") {
    CHECK(safe_filename(std::string(255, 'a')) == std::string(255, 'a'));
    CHECK(safe_filename(std::string(300, 'a')) == std::string(255, 'a'));
    // The cut applies after the leading dots are gone.
    CHECK(safe_filename("..." + std::string(255, 'a')) == std::string(255, 'a'));
}

TEST_CASE("multipart: safe_filename never splits a UTF-8 sequence", "[multipart]") {
    const std::string two = "\xC3\xA9";           // é
    const std::string three = "\xE2\x82\xAC";     // €
    const std::string four = "\xF0\x9F\x98\x80";  // 😀

    // A sequence that ends exactly at byte 255 stays.
    CHECK(safe_filename(std::string(253, 'a') + two + "zz") == std::string(253, 'a') + two);
    CHECK(safe_filename(std::string(252, 'a') + three + "z") == std::string(252, 'a') + three);
    CHECK(safe_filename(std::string(251, 'a') + four + "z") == std::string(251, 'a') + four);

    // One that straddles the limit goes, whatever its length and position.
    CHECK(safe_filename(std::string(254, 'a') + two) == std::string(254, 'a'));
    for (std::size_t before = 252; before <= 254; ++before) {
        INFO(before);
        CHECK(safe_filename(std::string(before, 'a') + four + "tail") == std::string(before, 'a'));
    }
    CHECK(safe_filename(std::string(253, 'a') + three) == std::string(253, 'a'));

    // All multibyte: 100 x 3 bytes becomes 85 whole characters (255 bytes).
    std::string euros;
    for (int i = 0; i < 100; ++i) euros += three;
    CHECK(safe_filename(euros) == euros.substr(0, 255));
    std::string emoji;
    for (int i = 0; i < 100; ++i) emoji += four;
    CHECK(safe_filename(emoji) == emoji.substr(0, 252));
}

TEST_CASE("multipart: safe_filename cuts invalid UTF-8 at 255 bytes", "[multipart]") {
    const std::string junk(300, '\x80');  // nothing but continuation bytes
    CHECK(safe_filename(junk).size() == 255);
}

}  // namespace unit_test_web_multipart

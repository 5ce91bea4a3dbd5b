// Forms and uploads over the wire: multipart/form-data bodies built byte by byte (fields,
// files with binary content, empty file inputs, unsafe file names), the upload and body
// limits (also for chunked bodies), malformed multipart, and urlencoded forms.

#include <atomic>
#include <catch2/catch.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "support/raw_client.hpp"
#include "support/test_server.hpp"

namespace wire_test_uploads_wire {

using namespace tern_test;

namespace {

constexpr std::string_view boundary = "----terntestBoundary7MA4YWxkTrZu0gW";

// One part of a multipart body: its Content-Disposition parameters after "form-data; ",
// an optional Content-Type, and its bytes.
struct part {
    std::string disposition;
    std::string content_type;  // empty: no Content-Type line
    std::string data;
};

part field(std::string name, std::string value) {
    return {"name=\"" + name + "\"", "", std::move(value)};
}

part file(std::string name, std::string filename, std::string type, std::string data) {
    return {"name=\"" + name + "\"; filename=\"" + filename + "\"", std::move(type),
            std::move(data)};
}

// A multipart/form-data body with `parts`, delimited by `boundary`.
std::string multipart_body(const std::vector<part>& parts) {
    std::string out;
    for (const auto& p : parts) {
        out.append("--").append(boundary).append("\r\n");
        out.append("Content-Disposition: form-data; ").append(p.disposition).append("\r\n");
        if (!p.content_type.empty()) {
            out.append("Content-Type: ").append(p.content_type).append("\r\n");
        }
        out.append("\r\n").append(p.data).append("\r\n");
    }
    out.append("--").append(boundary).append("--\r\n");
    return out;
}

std::string multipart_type() {
    return "Content-Type: multipart/form-data; boundary=" + std::string(boundary) + "\r\n";
}

// A POST of `body` (a whole multipart body) with a Content-Length.
std::string multipart_post(std::string_view target, std::string_view body) {
    return body_request("POST", target, body, multipart_type());
}

// `body` as chunks of at most `size` bytes, with the last chunk when `finish`.
std::string chunked(std::string_view body, std::size_t size, bool finish = true) {
    std::string out;
    static constexpr char hex[] = "0123456789abcdef";
    for (std::size_t at = 0; at < body.size(); at += size) {
        const auto piece = body.substr(at, size);
        std::string digits;
        for (std::size_t n = piece.size(); n != 0; n /= 16)
            digits.insert(digits.begin(), hex[n % 16]);
        out.append(digits).append("\r\n").append(piece).append("\r\n");
    }
    if (finish) out.append("0\r\n\r\n");
    return out;
}

// Deterministic binary bytes with every byte value, CR, LF, NUL and near-delimiters in them.
std::string binary_bytes() {
    std::string s;
    for (int i = 0; i < 256; ++i) s.push_back(static_cast<char>(i));
    s.append("\r\n");
    s.push_back('\0');
    s.append("\r\n--");                                 // a delimiter's start...
    s.append(boundary.substr(0, boundary.size() - 1));  // ...cut one byte short
    s.append("x--").append(boundary);                   // a boundary without the CRLF before it
    s.append("\n\r\0\0\r\r\n\n", 8);
    std::uint32_t x = 2463534242u;
    for (int i = 0; i < 4000; ++i) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        s.push_back(static_cast<char>(x & 0xff));
    }
    s.append("\r\n");  // ends in a line end, which is data, not the delimiter's
    return s;
}

// Routes that report what the server read from a form.
void form_routes(tern::app& app) {
    // The fields title (first value) and tag (every value); "<none>" when absent.
    app.post("/fields", [](tern::context& ctx) {
        std::string out = "title=" + ctx.form_param("title").value_or("<none>") + "\ntags=";
        for (const auto& t : ctx.form_params("tag")) out.append("[").append(t).append("]");
        out.append("\nfiles=").append(std::to_string(ctx.uploaded_files().size()));
        ctx.text(out);
    });
    // Every uploaded file: field|filename|raw_filename|content_type|size, one per line.
    app.post("/files", [](tern::context& ctx) {
        std::string out;
        for (const auto& f : ctx.uploaded_files()) {
            out.append(f.field).append("|").append(f.filename).append("|");
            out.append(f.raw_filename).append("|").append(f.content_type).append("|");
            out.append(std::to_string(f.size())).append("\n");
        }
        ctx.text(out);
    });
    // The exact bytes of the first file in field `f`, its metadata in headers; 404 if none.
    app.post("/file", [](tern::context& ctx) {
        const auto f = ctx.uploaded_file(ctx.query_param("f").value_or("file"));
        if (!f) throw tern::not_found("no file");
        ctx.header("X-Field", f->field)
            .header("X-Filename", f->filename)
            .header("X-Raw-Filename", f->raw_filename)
            .header("X-Type", f->content_type)
            .content_type("application/octet-stream")
            .result(std::string(f->content));
    });
}

}  // namespace

TEST_CASE("multipart text fields are read with form_param and form_params", "[wire][uploads]") {
    test_server server(form_routes);
    const auto body = multipart_body({
        field("tag", "red"),
        field("title", "Hello, wire"),
        field("tag", "green"),
        field("title", "second title"),
        field("tag", ""),
        field("tag", "line one\r\nline two"),
    });
    const auto r = fetch(server, multipart_post("/fields", body));
    INFO(describe(r));
    CHECK(r.status == 200);
    CHECK(r.body == "title=Hello, wire\ntags=[red][green][][line one\r\nline two]\nfiles=0");
}

TEST_CASE("uploaded files keep field, names, type and their exact bytes", "[wire][uploads]") {
    test_server server(form_routes);
    const std::string binary = binary_bytes();
    const auto body = multipart_body({
        field("title", "report"),
        file("doc", "notes.txt", "text/plain", "first file\n"),
        file("blob", "data.bin", "application/octet-stream", binary),
        file("doc", "second.csv", "text/csv", "a,b\r\n1,2\r\n"),
        {"name=\"untyped\"; filename=\"plain\"", "", "no type given"},
        {"name=\"euro\"; filename*=UTF-8''%E2%82%AC%20rates.txt", "text/plain", "x"},
    });

    auto r = fetch(server, multipart_post("/files", body));
    INFO(describe(r));
    CHECK(r.status == 200);
    CHECK(r.body ==
          "doc|notes.txt|notes.txt|text/plain|11\n"
          "blob|data.bin|data.bin|application/octet-stream|" +
              std::to_string(binary.size()) +
              "\n"
              "doc|second.csv|second.csv|text/csv|10\n"
              "untyped|plain|plain|text/plain|13\n"
              "euro|\xE2\x82\xAC rates.txt|\xE2\x82\xAC rates.txt|text/plain|1\n");

    r = fetch(server, multipart_post("/file?f=blob", body));
    CHECK(r.status == 200);
    CHECK(r.header("X-Field") == "blob");
    CHECK(r.header("X-Filename") == "data.bin");
    CHECK(r.header("X-Type") == "application/octet-stream");
    CHECK(r.header("Content-Type") == "application/octet-stream");
    CHECK(r.body.size() == binary.size());
    CHECK(r.body == binary);

    // uploaded_file gives the first file of a field; files are not form fields.
    r = fetch(server, multipart_post("/file?f=doc", body));
    CHECK(r.body == "first file\n");
    CHECK(r.header("X-Filename") == "notes.txt");
    r = fetch(server, multipart_post("/file?f=title", body));
    CHECK(r.status == 404);
    r = fetch(server, multipart_post("/fields", body));
    CHECK(r.body == "title=report\ntags=\nfiles=5");
}

TEST_CASE("file names are made safe, raw_filename keeps what the client sent", "[wire][uploads]") {
    test_server server(form_routes);
    const auto body = multipart_body({
        file("a", "../../etc/passwd", "text/plain", "1"),
        file("b", "/abs/path/shadow", "text/plain", "2"),
        file("c", "..", "text/plain", "3"),
        file("d", ".htaccess", "text/plain", "4"),
        file("e", "we<i>rd:na|me?.txt", "text/plain", "5"),
        file("f", "dir/..%2F..%2Fx", "text/plain", "6"),
    });
    auto r = fetch(server, multipart_post("/files", body));
    INFO(describe(r));
    CHECK(r.status == 200);
    CHECK(r.body ==
          "a|passwd|../../etc/passwd|text/plain|1\n"
          "b|shadow|/abs/path/shadow|text/plain|1\n"
          "c|upload|..|text/plain|1\n"
          "d|htaccess|.htaccess|text/plain|1\n"
          "e|we_i_rd_na_me_.txt|we<i>rd:na|me?.txt|text/plain|1\n"
          "f|%2F..%2Fx|dir/..%2F..%2Fx|text/plain|1\n");

    r = fetch(server, multipart_post("/file?f=a", body));
    CHECK(r.header("X-Filename") == "passwd");
    CHECK(r.header("X-Raw-Filename") == "../../etc/passwd");
    CHECK(r.body == "1");
}

TEST_CASE("an empty file input (filename=\"\" and no data) is not an upload", "[wire][uploads]") {
    test_server server(form_routes);
    const auto body = multipart_body({
        field("title", "no attachment"),
        file("attachment", "", "application/octet-stream", ""),
    });
    auto r = fetch(server, multipart_post("/files", body));
    INFO(describe(r));
    CHECK(r.status == 200);
    CHECK(r.body.empty());
    r = fetch(server, multipart_post("/file?f=attachment", body));
    CHECK(r.status == 404);
    CHECK(r.body == "no file");
    r = fetch(server, multipart_post("/fields", body));
    CHECK(r.body == "title=no attachment\ntags=\nfiles=0");

    // An empty file that has a name is an upload, of zero bytes.
    const auto named = multipart_body({file("attachment", "empty.txt", "text/plain", "")});
    r = fetch(server, multipart_post("/files", named));
    CHECK(r.body == "attachment|empty.txt|empty.txt|text/plain|0\n");
}

TEST_CASE("a file over max_upload_file_size gets 413, a text field of that size does not",
          "[wire][uploads]") {
    test_server server([](tern::app& app) {
        form_routes(app);
        app.configure([](tern::config& c) { c.limits.max_upload_file_size = 1000; });
    });
    // Exactly at the limit: accepted.
    auto body =
        multipart_body({file("doc", "ok.bin", "application/octet-stream", std::string(1000, 'x'))});
    auto r = fetch(server, multipart_post("/files", body));
    INFO(describe(r));
    CHECK(r.status == 200);
    CHECK(r.body == "doc|ok.bin|ok.bin|application/octet-stream|1000\n");

    // One byte over: 413, whether the handler asks for files or for fields.
    body = multipart_body({field("title", "t"), file("doc", "big.bin", "application/octet-stream",
                                                     std::string(1001, 'x'))});
    for (const char* target : {"/files", "/file?f=doc", "/fields"}) {
        INFO("target " << target);
        raw_client c = server.client();
        c.send(multipart_post(target, body));
        r = c.read_response();
        INFO(describe(r));
        CHECK(r.status == 413);
        check_common_headers(r);
        CHECK(r.body == "file 'big.bin' is larger than 1000 bytes");
        // The body was read in full: the connection goes on.
        c.send(get_request(alive_path));
        const auto next = c.read_response();
        CHECK(next.status == 200);
        CHECK(next.body == "alive");
    }

    // The limit is for files: a 5000-byte text field passes.
    body = multipart_body({field("title", std::string(5000, 't'))});
    r = fetch(server, multipart_post("/fields", body));
    CHECK(r.status == 200);
    CHECK(r.body == "title=" + std::string(5000, 't') + "\ntags=\nfiles=0");
    check_still_serving(server.port());
}

TEST_CASE("a chunked upload over max_body_size gets 413 and the connection closes",
          "[wire][uploads]") {
    std::atomic<int> handled{0};
    test_server server([&](tern::app& app) {
        app.post("/upload", [&](tern::context& ctx) {
            ++handled;
            ctx.text(std::to_string(ctx.uploaded_files().size()));
        });
        app.max_body_size(4096);
    });
    const std::string head = "POST /upload HTTP/1.1\r\nHost: localhost\r\n" + multipart_type() +
                             "Transfer-Encoding: chunked\r\n\r\n";

    // Under the limit, chunked: served.
    const auto small =
        multipart_body({file("f", "a.bin", "application/octet-stream", std::string(3000, 'a'))});
    REQUIRE(small.size() < 4096);
    auto r = fetch(server, head + chunked(small, 500));
    INFO(describe(r));
    CHECK(r.status == 200);
    CHECK(r.body == "1");
    CHECK(handled == 1);

    // Over the limit in many small chunks, each far below it: 413 and the close.
    const auto large =
        multipart_body({file("f", "b.bin", "application/octet-stream", std::string(6000, 'b'))});
    r = expect_rejected(server, head + chunked(large, 256), 413);
    CHECK(r.body == "Content Too Large");

    // Over the limit with the body not yet finished: the answer does not wait for the end.
    r = expect_rejected(server, head + chunked(large, 1024, false), 413);

    // Over the limit by Content-Length: refused before the body.
    r = expect_rejected(server, multipart_post("/upload", large), 413);
    CHECK(handled == 1);
}

TEST_CASE("a malformed multipart body gets 400 and the server goes on", "[wire][uploads]") {
    test_server server(form_routes);
    const std::string b(boundary);
    const std::vector<std::pair<std::string_view, std::string>> cases = {
        {"no closing boundary",
         "--" + b + "\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\nvalue\r\n"},
        {"no opening boundary", "just some bytes\r\n"},
        {"part without Content-Disposition",
         "--" + b + "\r\nContent-Type: text/plain\r\n\r\nv\r\n--" + b + "--\r\n"},
        {"part without a name",
         "--" + b + "\r\nContent-Disposition: form-data; filename=\"x\"\r\n\r\nv\r\n--" + b +
             "--\r\n"},
        {"disposition not form-data",
         "--" + b + "\r\nContent-Disposition: attachment; name=\"a\"\r\n\r\nv\r\n--" + b +
             "--\r\n"},
        {"bare LF in part headers",
         "--" + b + "\nContent-Disposition: form-data; name=\"a\"\n\nv\r\n--" + b + "--\r\n"},
        {"folded part header",
         "--" + b + "\r\nContent-Disposition: form-data;\r\n name=\"a\"\r\n\r\nv\r\n--" + b +
             "--\r\n"},
        {"unterminated quoted name",
         "--" + b + "\r\nContent-Disposition: form-data; name=\"a\r\n\r\nv\r\n--" + b + "--\r\n"},
        {"two Content-Disposition headers",
         "--" + b +
             "\r\nContent-Disposition: form-data; name=\"a\"\r\nContent-Disposition: form-data; "
             "name=\"b\"\r\n\r\nv\r\n--" +
             b + "--\r\n"},
        {"headers never end", "--" + b + "\r\nContent-Disposition: form-data; name=\"a\"\r\n"},
    };
    for (const auto& [name, body] : cases) {
        for (const char* target : {"/fields", "/files"}) {
            INFO("case: " << name << ", target " << target);
            raw_client c = server.client();
            c.send(multipart_post(target, body));
            const auto r = c.read_response();
            INFO(describe(r));
            CHECK(r.status == 400);
            check_common_headers(r);
            CHECK_FALSE(r.body.empty());
            // A 400 from the handler: the request was framed correctly, so the
            // connection goes on.
            c.send(get_request(alive_path));
            const auto next = c.read_response();
            CHECK(next.status == 200);
        }
    }
    check_still_serving(server.port());
}

TEST_CASE("a multipart Content-Type without a usable boundary gets 400", "[wire][uploads]") {
    test_server server(form_routes);
    const auto body = multipart_body({field("title", "t")});
    const std::vector<std::string> types = {
        "multipart/form-data",
        "multipart/form-data; charset=utf-8",
        "multipart/form-data; boundary=",
        "multipart/form-data; boundary=" + std::string(71, 'b'),
        "multipart/form-data; boundary=\"bad\\\"quote\"",
    };
    for (const auto& type : types) {
        INFO("Content-Type: " << type);
        const auto r =
            fetch(server, body_request("POST", "/fields", body, "Content-Type: " + type + "\r\n"));
        INFO(describe(r));
        CHECK(r.status == 400);
    }
    // The boundary may be quoted and the names written in any case.
    const auto r = fetch(server, body_request("POST", "/fields", body,
                                              "Content-Type: Multipart/Form-Data; BOUNDARY=\"" +
                                                  std::string(boundary) + "\"\r\n"));
    INFO(describe(r));
    CHECK(r.status == 200);
    CHECK(r.body == "title=t\ntags=\nfiles=0");
}

TEST_CASE("a preamble and an epilogue around the parts are ignored", "[wire][uploads]") {
    test_server server(form_routes);
    const auto body = "This is the preamble.\r\n" +
                      multipart_body({field("title", "framed"), field("tag", "x")}) +
                      "and an epilogue\r\n";
    const auto r = fetch(server, multipart_post("/fields", body));
    INFO(describe(r));
    CHECK(r.status == 200);
    CHECK(r.body == "title=framed\ntags=[x]\nfiles=0");
}

TEST_CASE("an urlencoded form decodes percent-escapes and '+'", "[wire][uploads]") {
    test_server server([](tern::app& app) {
        form_routes(app);
        app.post("/form", [](tern::context& ctx) {
            std::string out;
            for (const char* name : {"name", "plus", "empty", "amp", "n k", "n%20k", "missing"}) {
                out.append(name).append("=").append(ctx.form_param(name).value_or("<none>"));
                out.append("\n");
            }
            for (const auto& t : ctx.form_params("tag")) out.append("[").append(t).append("]");
            ctx.text(out);
        });
    });
    const std::string body =
        "name=J%C3%BCrgen+M%C3%BCller&tag=a&plus=1%2B1+%3D+2&empty=&amp=b%26c%3Dd&tag=b+c"
        "&n+k=spaced+key&tag=%2F%3F%23";
    auto r = fetch(
        server, body_request("POST", "/form", body,
                             "Content-Type: application/x-www-form-urlencoded; charset=UTF-8\r\n"));
    INFO(describe(r));
    CHECK(r.status == 200);
    CHECK(r.body ==
          "name=J\xC3\xBCrgen M\xC3\xBCller\n"
          "plus=1+1 = 2\n"
          "empty=\n"
          "amp=b&c=d\n"
          "n k=spaced key\n"
          "n%20k=<none>\n"
          "missing=<none>\n"
          "[a][b c][/?#]");

    // The media type is compared case-insensitively.
    r = fetch(server, body_request("POST", "/fields", "title=A+B%21&tag=1",
                                   "Content-Type: Application/X-WWW-Form-URLEncoded\r\n"));
    CHECK(r.body == "title=A B!\ntags=[1]\nfiles=0");

    // The same bytes under another type are not a form.
    r = fetch(server,
              body_request("POST", "/fields", "title=A+B%21", "Content-Type: text/plain\r\n"));
    CHECK(r.body == "title=<none>\ntags=\nfiles=0");
    r = fetch(server, body_request("POST", "/fields", "title=A+B%21"));
    CHECK(r.body == "title=<none>\ntags=\nfiles=0");
}

}  // namespace wire_test_uploads_wire

// tern::multipart_reader over HTTP/2 through the test kit's client: the body reaches the
// reader whole there for now (docs/uploads.md), and the parts come out the same as over
// HTTP/1.1; a malformed body is 400 and a file over the limit 413 on the stream.

#include <catch2/catch.hpp>
#include <tern/tern.hpp>
#include <tern/testing.hpp>

#include <cstdint>
#include <optional>
#include <string>

namespace kit_test_multipart_reader_h2 {

using tern::testing::client_options;

namespace {

void add_routes(tern::app& app) {
    app.post("/parts", tern::streamed_body([](tern::context& ctx) -> tern::task {
                 tern::multipart_reader parts(ctx, tern::multipart_options{.max_file_size = 1000});
                 std::string out(ctx.protocol());
                 while (auto part = co_await parts.next_part()) {
                     std::size_t n = 0;
                     std::string first;
                     while (auto piece = co_await parts.next_data()) {
                         if (first.empty()) first = std::string(piece->substr(0, 3));
                         n += piece->size();
                     }
                     out += " " + part->field + ":" + part->filename + ":" + std::to_string(n) +
                            ":" + first;
                 }
                 ctx.text(out);
             }));
}

constexpr const char* form_type = "multipart/form-data; boundary=XyZ";

std::string body_of(std::size_t file_bytes) {
    return "--XyZ\r\nContent-Disposition: form-data; name=\"note\"\r\n\r\nhello\r\n"
           "--XyZ\r\nContent-Disposition: form-data; name=\"f\"; filename=\"C:\\\\up\\\\a.txt\"\r\n"
           "Content-Type: text/csv\r\n\r\n" +
           std::string(file_bytes, 'z') + "\r\n--XyZ--\r\n";
}

}  // namespace

TEST_CASE("a multipart_reader reads the parts of a body sent over HTTP/2",
          "[kit][h2][multipart-stream]") {
    tern::app app;
    add_routes(app);
    tern::testing::server server(app);
    auto http = server.make_client(client_options{.http2 = true});
    const auto r = http.post("/parts", body_of(1000), form_type);
    CHECK(r.status == 200);
    CHECK(r.protocol == "HTTP/2");
    CHECK(r.body == "HTTP/2 note::5:hel f:a.txt:1000:zzz");
}

TEST_CASE("a multipart_reader's refusals are 400 and 413 over HTTP/2, and the connection goes on",
          "[kit][h2][multipart-stream]") {
    tern::app app;
    add_routes(app);
    tern::testing::server server(app);
    auto http = server.make_client(client_options{.http2 = true});
    const auto big = http.post("/parts", body_of(1001), form_type);
    CHECK(big.status == 413);
    CHECK(big.body.find("is larger than 1000 bytes") != std::string::npos);
    const auto bad = http.post("/parts", "--XyZ\r\nno headers end", form_type);
    CHECK(bad.status == 400);
    const auto ok = http.post("/parts", body_of(3), form_type);
    CHECK(ok.status == 200);
    CHECK(ok.body == "HTTP/2 note::5:hel f:a.txt:3:zzz");
}

}  // namespace kit_test_multipart_reader_h2

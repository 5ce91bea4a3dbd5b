// Precompressed siblings: name.br / name.gz chosen by Accept-Encoding q-values, with
// Content-Encoding, Vary, the original's Content-Type, their own ETag, and ranges over
// the encoded bytes.

#include "http/accept_encoding.hpp"
#include "http/header_values.hpp"
#include "unit/static/test_fixture.hpp"

namespace unit_test_static_precompressed {

using namespace static_test;
using tern::detail::parse_accept_encoding;
using tern::detail::parse_qvalue;

namespace {

struct compressed_tree : temp_tree {
    compressed_tree() {
        write("app.js", "console.log('plain')");
        write("app.js.br", "BROTLI");
        write("app.js.gz", "GZIP-BYTES");
        write("only-gz.css", "body{}");
        write("only-gz.css.gz", "GZ");
        write("plain.txt", "plain");
        write("index.html", "home");
        write("index.html.gz", "GZHOME");
    }
};

/// The coding chosen for `accept_encoding` ("" when the file itself is sent).
std::string coding_for(const static_files& files, std::string_view path,
                       std::string_view accept_encoding) {
    const auto r = get(files, path, {{"Accept-Encoding", accept_encoding}});
    REQUIRE(served(r));
    return std::string(r.field("Content-Encoding"));
}

}  // namespace

TEST_CASE("q-values parse to thousandths", "[static][encoding]") {
    CHECK(parse_qvalue("1") == 1000);
    CHECK(parse_qvalue("1.000") == 1000);
    CHECK(parse_qvalue("0") == 0);
    CHECK(parse_qvalue("0.5") == 500);
    CHECK(parse_qvalue("0.001") == 1);
    CHECK(parse_qvalue("0.") == 0);
    CHECK(parse_qvalue("1.5") == -1);
    CHECK(parse_qvalue("0.0001") == -1);
    CHECK(parse_qvalue("2") == -1);
    CHECK(parse_qvalue(".5") == -1);
    CHECK(parse_qvalue("") == -1);
}

TEST_CASE("a list member splits into its value and weight", "[static][encoding]") {
    using tern::detail::split_weight;
    CHECK(split_weight("gzip").value == "gzip");
    CHECK(split_weight("gzip").weight == 1000);
    CHECK(split_weight("text/html ; level=1;q=0.7").value == "text/html");
    CHECK(split_weight("text/html ; level=1;q=0.7").weight == 700);
    CHECK(split_weight("br;Q=0.25").weight == 250);
    CHECK(split_weight("br; q = 0").weight == 0);  // spaces around '=' tolerated
    CHECK(split_weight("br;q=2").weight == 0);     // an invalid weight refuses
    CHECK(split_weight("br;q=").weight == 0);
    CHECK(split_weight("br;qq=0.5").weight == 1000);  // another parameter, not q
}

TEST_CASE("Accept-Encoding weights, '*', aliases and q=0", "[static][encoding]") {
    auto w = parse_accept_encoding(fields{{"Accept-Encoding", "gzip, deflate, br"}});
    CHECK(w.br == 1000);
    CHECK(w.gzip == 1000);
    w = parse_accept_encoding(fields{{"Accept-Encoding", "br;q=0, *"}});
    CHECK(w.br == 0);
    CHECK(w.gzip == 1000);
    w = parse_accept_encoding(fields{{"accept-encoding", "X-GZIP; Q=0.3"}});
    CHECK(w.gzip == 300);
    CHECK(w.br == 0);
    w = parse_accept_encoding(fields{{"Accept-Encoding", "identity"}});
    CHECK(w.gzip == 0);
    w = parse_accept_encoding(fields{{"Accept-Encoding", "gzip;q=bad"}});
    CHECK(w.gzip == 0);
    w = parse_accept_encoding(fields{{"Accept-Encoding", "gzip"}, {"Accept-Encoding", "br"}});
    CHECK(w.br == 1000);
    CHECK(w.gzip == 1000);
    w = parse_accept_encoding(fields{});
    CHECK(w.br == 0);
    CHECK(w.gzip == 0);
}

TEST_CASE("br is preferred, then gzip, then the file itself", "[static][encoding]") {
    compressed_tree t;
    const static_files files({t.config()});
    CHECK(coding_for(files, "/app.js", "gzip, deflate, br") == "br");
    CHECK(coding_for(files, "/app.js", "gzip") == "gzip");
    CHECK(coding_for(files, "/app.js", "deflate") == "");
    CHECK(coding_for(files, "/only-gz.css", "br, gzip") == "gzip");
    CHECK(coding_for(files, "/plain.txt", "br, gzip") == "");
    CHECK(coding_for(files, "/", "br, gzip") == "gzip");
}

TEST_CASE("q-values order the choice and q=0 excludes", "[static][encoding]") {
    compressed_tree t;
    const static_files files({t.config()});
    CHECK(coding_for(files, "/app.js", "br;q=0.5, gzip;q=0.9") == "gzip");
    CHECK(coding_for(files, "/app.js", "br;q=0.9, gzip;q=0.5") == "br");
    CHECK(coding_for(files, "/app.js", "br;q=0, gzip") == "gzip");
    CHECK(coding_for(files, "/app.js", "br;q=0, gzip;q=0") == "");
    CHECK(coding_for(files, "/app.js", "*;q=0") == "");
    CHECK(coding_for(files, "/app.js", "*") == "br");
    CHECK(coding_for(files, "/app.js", "br;q=0, *;q=0.1") == "gzip");
}

TEST_CASE("no Accept-Encoding gets the file itself", "[static][encoding]") {
    compressed_tree t;
    const static_files files({t.config()});
    const auto r = get(files, "/app.js");
    REQUIRE(served(r));
    CHECK(r.field("Content-Encoding").empty());
    CHECK(r.field("Vary") == "Accept-Encoding");
    CHECK(body_of(r) == "console.log('plain')");
}

TEST_CASE("a precompressed response keeps the original type and has its own ETag",
          "[static][encoding]") {
    compressed_tree t;
    const static_files files({t.config()});
    const auto plain = get(files, "/app.js");
    const auto br = get(files, "/app.js", {{"Accept-Encoding", "br"}});
    REQUIRE(served(br));
    CHECK(body_of(br) == "BROTLI");
    CHECK(length_of(br) == 6);
    CHECK(br.res.content_type == "text/javascript; charset=utf-8");
    CHECK(br.field("Content-Encoding") == "br");
    CHECK(br.field("Vary") == "Accept-Encoding");
    CHECK(br.field("ETag") != plain.field("ETag"));
    CHECK(br.field("ETag").ends_with("-br\""));
    const std::string br_tag(br.field("ETag"));
    // The br tag validates only the br representation.
    CHECK(
        get(files, "/app.js", {{"Accept-Encoding", "br"}, {"If-None-Match", br_tag}}).res.status ==
        304);
    CHECK(get(files, "/app.js", {{"If-None-Match", br_tag}}).res.status == 200);
}

TEST_CASE("a range applies to the encoded bytes", "[static][encoding]") {
    compressed_tree t;
    const static_files files({t.config()});
    const auto r = get(files, "/app.js", {{"Accept-Encoding", "gzip"}, {"Range", "bytes=0-3"}});
    CHECK(r.res.status == 206);
    CHECK(r.field("Content-Range") == "bytes 0-3/10");
    CHECK(body_of(r) == "GZIP");
}

TEST_CASE("a symlinked or non-regular sibling is not used", "[static][encoding][symlink]") {
    compressed_tree t;
    t.write("b.js", "plain b");
    t.symlink("app.js.br", "b.js.br");
    t.mkdir("b.js.gz");
    const static_files files({t.config()});
    CHECK(coding_for(files, "/b.js", "br, gzip") == "");
}

TEST_CASE("precompressed = false ignores siblings and sends no Vary", "[static][encoding]") {
    compressed_tree t;
    auto config = t.config();
    config.precompressed = false;
    const static_files files({config});
    const auto r = get(files, "/app.js", {{"Accept-Encoding", "br, gzip"}});
    REQUIRE(served(r));
    CHECK(r.field("Content-Encoding").empty());
    CHECK(r.field("Vary").empty());
    CHECK(body_of(r) == "console.log('plain')");
}

}  // namespace unit_test_static_precompressed

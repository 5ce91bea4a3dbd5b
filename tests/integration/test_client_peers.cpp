// tern::client against servers it did not grow up with: nginx (keep-alive up to its
// keepalive_requests, then Connection: close; static files, HEAD, 404, a request body) and
// Python's http.server (HTTP/1.0, a connection per response). Skipped where nginx is not
// installed (scripts/install-deps.sh installs it).

#if !defined(_WIN32)  // Not on Windows: nginx and Python run as child processes (fork, exec)
#include <catch2/catch.hpp>

#include <tern/client.hpp>

#include <filesystem>
#include <string>

#include "support/child_process.hpp"
#include "support/temp_dir.hpp"

namespace wire_test_client_peers {

using namespace std::chrono_literals;

TEST_CASE("client: against nginx, keep-alive to its request cap, files, HEAD and 404",
          "[client][peers]") {
    if (!std::filesystem::exists("/usr/sbin/nginx")) {
        WARN("nginx is not installed: skipped");
        return;
    }
    tern_test::temp_dir dir;
    std::string big(1'000'000, '\0');
    for (std::size_t i = 0; i < big.size(); ++i) big[i] = static_cast<char>('A' + i % 23);
    dir.write("www/big.bin", big);
    dir.write("www/small.txt", "small file\n");
    dir.write("tmp/.keep", "");
    const auto port = tern_test::free_port();
    const std::string prefix = dir.path.string();
    dir.write("nginx.conf", "daemon off; master_process off; pid " + prefix +
                                "/nginx.pid;\n"
                                "error_log " +
                                prefix +
                                "/error.log;\nevents {}\n"
                                "http {\n access_log off; keepalive_requests 3;\n"
                                " client_body_temp_path " +
                                prefix + "/tmp; proxy_temp_path " + prefix +
                                "/tmp;\n"
                                " fastcgi_temp_path " +
                                prefix + "/tmp; uwsgi_temp_path " + prefix +
                                "/tmp;\n"
                                " scgi_temp_path " +
                                prefix +
                                "/tmp;\n"
                                " server {\n  listen 127.0.0.1:" +
                                std::to_string(port) +
                                ";\n"
                                "  root " +
                                prefix +
                                "/www;\n"
                                "  location = /text { return 200 \"from nginx\\n\"; }\n }\n}\n");
    tern_test::child_process nginx({"/usr/sbin/nginx", "-p", prefix, "-c", prefix + "/nginx.conf"});
    REQUIRE(tern_test::port_opens(port, 10s));
    const std::string base = "http://127.0.0.1:" + std::to_string(port);

    tern::client c;
    // Seven calls: nginx closes each connection after its third response (Connection:
    // close), so the client opens three and never sends on a closed one.
    for (int i = 0; i < 7; ++i) {
        auto r = c.fetch_blocking({.url = base + "/text"});
        CHECK(r.status == 200);
        CHECK(r.body == "from nginx\n");
        CHECK(r.header("server").value_or("").find("nginx") == 0);
    }
    CHECK(c.idle_connections() == 1);
    auto big_r = c.fetch_blocking({.url = base + "/big.bin"});
    CHECK(big_r.body == big);
    auto head = c.fetch_blocking({.method = "HEAD", .url = base + "/small.txt"});
    CHECK(head.status == 200);
    CHECK(head.header("content-length") == std::optional<std::string_view>("11"));
    CHECK(head.body.empty());
    CHECK(c.fetch_blocking({.url = base + "/small.txt"}).body == "small file\n");
    auto missing = c.fetch_blocking({.url = base + "/missing"});
    CHECK(missing.status == 404);
    CHECK(missing.body.find("404") != std::string::npos);
    auto posted = c.fetch_blocking({.method = "POST", .url = base + "/text", .body = "ignored"});
    CHECK(posted.status == 200);
    CHECK(posted.body == "from nginx\n");
}

TEST_CASE("client: against Python's http.server (HTTP/1.0, one response per connection)",
          "[client][peers]") {
    tern_test::temp_dir dir;
    dir.write("hello.txt", "hello from python\n");
    const auto port = tern_test::free_port();
    tern_test::child_process python({"/usr/bin/python3", "-m", "http.server", std::to_string(port),
                                     "--bind", "127.0.0.1", "--directory", dir.path.string()});
    REQUIRE(tern_test::port_opens(port, 10s));
    const std::string url = "http://127.0.0.1:" + std::to_string(port) + "/hello.txt";
    tern::client c;
    for (int i = 0; i < 3; ++i) {
        auto r = c.fetch_blocking({.url = url});
        CHECK(r.status == 200);
        CHECK(r.body == "hello from python\n");
        CHECK(c.idle_connections() == 0);  // HTTP/1.0 without keep-alive: not kept
    }
    auto missing = c.fetch_blocking({.url = url + ".missing"});
    CHECK(missing.status == 404);
}

}  // namespace wire_test_client_peers
#endif  // !defined(_WIN32)

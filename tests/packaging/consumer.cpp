// The application every packaging test builds (tests/packaging/run.sh): a tern::app on a
// free loopback port, asked over a real socket for a 200 with a body and for an http_error
// thrown by the application's own handler (the exception crosses into libtern, shared or
// static), for JSON from <tern/json.hpp>, and for an application exception type mapped by
// app.exception<E> (its type information crosses into libtern too). Exits 0 when every
// answer is right and libtern's version is the headers'.

#include <tern/json.hpp>
#include <tern/tern.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <string_view>

namespace {

// Sends `GET <path>` with `Connection: close` and returns all the server sent back; empty
// when the connection fails. Reads time out after 10 s so a broken server cannot hang ctest.
std::string get(std::uint16_t port, std::string_view path) {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) return {};
    const timeval timeout{10, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    std::string reply;
    if (::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0) {
        const std::string request = "GET " + std::string(path) +
                                    " HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n";
        if (::send(fd, request.data(), request.size(), MSG_NOSIGNAL) ==
            static_cast<ssize_t>(request.size())) {
            char buffer[4096];
            ssize_t n = 0;
            while ((n = ::recv(fd, buffer, sizeof buffer, 0)) > 0) {
                reply.append(buffer, static_cast<std::size_t>(n));
            }
        }
    }
    ::close(fd);
    return reply;
}

// True when `reply` has status `status` and exactly `body` after the header block.
bool answered(const std::string& reply, std::string_view status, std::string_view body) {
    const auto end_of_headers = reply.find("\r\n\r\n");
    return reply.starts_with("HTTP/1.1 " + std::string(status) + " ") &&
           end_of_headers != std::string::npos &&
           std::string_view(reply).substr(end_of_headers + 4) == body;
}

}  // namespace

int main() {
    tern::app app;
    app.threads(1);
    app.get("/", [](tern::context& ctx) { ctx.text("hello from a tern consumer"); });
    app.get("/conflict", [](tern::context&) { throw tern::conflict("taken"); });
    app.get("/json", [](tern::context& ctx) { ctx.json({{"ok", true}}); });
    struct quota_exceeded {};
    app.get("/quota", [](tern::context&) { throw quota_exceeded{}; });
    app.exception<quota_exceeded>(
        [](quota_exceeded&, tern::context& ctx) { ctx.status(429).text("slow down"); });
    app.start("127.0.0.1", 0);
    const std::string hello = get(app.port(), "/");
    const std::string conflict = get(app.port(), "/conflict");
    const std::string json = get(app.port(), "/json");
    const std::string quota = get(app.port(), "/quota");
    app.stop();

    // The library linked must be the one whose headers were compiled against.
    const std::string headers_version = std::to_string(TERN_VERSION_MAJOR) + "." +
                                        std::to_string(TERN_VERSION_MINOR) + "." +
                                        std::to_string(TERN_VERSION_PATCH);
    const bool ok = headers_version == tern::version() &&
                    answered(hello, "200", "hello from a tern consumer") &&
                    answered(conflict, "409", "taken") && answered(json, "200", R"({"ok":true})") &&
                    answered(quota, "429", "slow down");
    std::printf("libtern %s, headers %s: %s\n", tern::version(), headers_version.c_str(),
                ok ? "200, 409, JSON and 429 as expected" : "unexpected answers");
    if (!ok) {
        std::printf("GET /:\n%s\nGET /conflict:\n%s\nGET /json:\n%s\nGET /quota:\n%s\n",
                    hello.c_str(), conflict.c_str(), json.c_str(), quota.c_str());
    }
    return ok ? 0 : 1;
}

// Running behind a load balancer: readiness that turns 503 when a stop begins while the
// server keeps serving for the grace period, liveness, listening on a socket made elsewhere
// (socket activation, handover), dual-stack and host names.

#if !defined(_WIN32)
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>
#endif

#include <catch2/catch.hpp>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <system_error>
#include <thread>

#include "platform/socket_api.hpp"
#include "support/eventually.hpp"
#include "support/raw_client.hpp"
#include "support/temp_dir.hpp"
#include "support/test_server.hpp"

namespace wire_test_health_and_listeners {

using namespace tern_test;
using namespace std::chrono_literals;

namespace {

response get(std::uint16_t port, std::string_view target) {
    raw_client c(port);
    c.send(get_request(target));
    return c.read_response();
}

#if !defined(_WIN32)  // the helpers of the POSIX-only cases below
// A listening IPv4 socket on 127.0.0.1 with a free port, owned by the test (as systemd or
// a parent process would own it).
struct listening_socket {
    int fd = -1;
    std::uint16_t port = 0;
    listening_socket() {
        fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        REQUIRE(fd >= 0);
        sockaddr_in addr{};
        addr.sin_family = AF_INET;
        addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        REQUIRE(::bind(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0);
        REQUIRE(::listen(fd, 128) == 0);
        socklen_t len = sizeof addr;
        REQUIRE(::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0);
        port = ntohs(addr.sin_port);
    }
    ~listening_socket() { ::close(fd); }
    listening_socket(const listening_socket&) = delete;
    listening_socket& operator=(const listening_socket&) = delete;
};

// One request over the Unix domain socket at `path` (throws client_error when it cannot
// connect).
response unix_get(const std::string& path, std::string_view target) {
    raw_client c;
    c.connect_unix(path);
    c.send(get_request(target, "Connection: close\r\n"));
    return c.read_response();
}
#endif  // !defined(_WIN32)

}  // namespace

TEST_CASE("health: /ready and /live answer 200 while the server runs", "[wire][health]") {
    test_server server([](tern::app& app) { app.health(); });
    const auto ready = get(server.port(), "/ready");
    CHECK(ready.status == 200);
    CHECK(ready.body == "ready");
    CHECK(ready.header("Cache-Control") == "no-store");
    const auto live = get(server.port(), "/live");
    CHECK(live.status == 200);
    CHECK(live.body == "live");
}

TEST_CASE(
    "health: a stop turns /ready to 503 at once, serves through the grace period with "
    "Connection: close, then closes the listener",
    "[wire][health]") {
    tern::health_config health;
    health.grace = 1500ms;
    test_server server([&](tern::app& app) {
        app.health(health);
        app.get("/work", [](tern::context& ctx) { ctx.text("done"); });
    });
    const auto port = server.port();
    // A keep-alive connection opened before the stop.
    raw_client kept(port);
    kept.send(get_request("/work"));
    CHECK(kept.read_response().body == "done");

    std::thread stopper([&] { server.stop(); });
    REQUIRE(eventually([&] { return get(port, "/ready").status == 503; }));
    const auto unready = get(port, "/ready");
    CHECK(unready.body == "unready");
    // Still serving, and liveness stays 200.
    const auto live = get(port, "/live");
    CHECK(live.status == 200);
    const auto during = get(port, "/work");
    CHECK(during.status == 200);
    CHECK(during.body == "done");
    CHECK(during.header("Connection") == "close");
    // The connection from before the stop is answered and then closed.
    kept.send(get_request("/work"));
    const auto last = kept.read_response();
    CHECK(last.body == "done");
    CHECK(last.header("Connection") == "close");
    CHECK(kept.closed_by_peer());
    stopper.join();
    CHECK(raw_client::connect_error(port) == ECONNREFUSED);
}

TEST_CASE("health: ready_check false answers 503, paths are configurable or off",
          "[wire][health]") {
    std::atomic<bool> database_up{false};
    tern::health_config health;
    health.ready_path = "/healthz/ready";
    health.live_path = "";
    health.ready_check = [&] { return database_up.load(); };
    test_server server([&](tern::app& app) { app.health(health); });
    CHECK(get(server.port(), "/healthz/ready").status == 503);
    database_up = true;
    CHECK(get(server.port(), "/healthz/ready").status == 200);
    CHECK(get(server.port(), "/live").status == 404);
    CHECK(get(server.port(), "/ready").status == 404);
}

TEST_CASE("health: bad settings are refused loudly", "[health]") {
    tern::app app;
    tern::health_config bad;
    bad.ready_path = "ready";
    CHECK_THROWS_AS(app.health(bad), std::invalid_argument);
    tern::health_config negative;
    negative.grace = -1ms;
    CHECK_THROWS_AS(app.health(negative), std::invalid_argument);
    app.health();
    CHECK_THROWS_AS(app.health(), std::logic_error);
}

TEST_CASE("without health, a stop closes the listener at once", "[wire][health]") {
    tern::app app;
    app.threads(1).get("/", [](tern::context& ctx) { ctx.text("ok"); });
    app.start("127.0.0.1", 0);
    const auto port = app.port();
    app.stop();
    CHECK(raw_client::connect_error(port) == ECONNREFUSED);
}

#if !defined(_WIN32)  // an int socket, pipes and systemd activation: refused on Windows
TEST_CASE(
    "start_fd serves a listening socket made elsewhere and leaves it open at stop, so "
    "connections queued meanwhile reach the next server",
    "[wire][listen_fd]") {
    listening_socket sock;
    {
        tern::app first(test_config());
        first.get("/", [](tern::context& ctx) { ctx.text("first"); });
        first.start_fd(sock.fd);
        CHECK(first.port() == sock.port);
        CHECK(get(sock.port, "/").body == "first");
        first.stop();
    }
    // Nothing serves the socket now, yet it still listens: a client connects (the kernel
    // completes the handshake into the accept queue) and waits.
    raw_client waiting(sock.port);
    waiting.send(get_request("/"));
    tern::app second(test_config());
    second.get("/", [](tern::context& ctx) { ctx.text("second"); });
    second.start_fd(sock.fd);
    CHECK(waiting.read_response().body == "second");
    second.stop();
}

TEST_CASE("start_fd refuses what is not a listening TCP socket", "[listen_fd]") {
    tern::app app;
    app.get("/", [](tern::context& ctx) { ctx.text("x"); });
    const int unbound = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    REQUIRE(unbound >= 0);
    CHECK_THROWS_AS(app.start_fd(unbound), std::invalid_argument);
    ::close(unbound);
    int pipe_fds[2];
    REQUIRE(::pipe(pipe_fds) == 0);
    CHECK_THROWS_AS(app.start_fd(pipe_fds[0]), std::invalid_argument);
    ::close(pipe_fds[0]);
    ::close(pipe_fds[1]);
    CHECK_THROWS_AS(app.start_fd(-1), std::invalid_argument);
    // Refused before anything started: the app still starts normally.
    app.start("127.0.0.1", 0);
    CHECK(get(app.port(), "/").body == "x");
    app.stop();
}

TEST_CASE("listen_fds follows sd_listen_fds: only for this pid, then the variables are unset",
          "[listen_fd]") {
    ::setenv("LISTEN_FDS", "1", 1);
    ::setenv("LISTEN_PID", "1", 1);  // another process's
    CHECK(tern::listen_fds().empty());
    CHECK(std::getenv("LISTEN_FDS") != nullptr);  // left for the process they were meant for

    listening_socket sock;
    // Put the socket at file descriptor 3 as systemd would (restored afterwards).
    const int saved3 = ::fcntl(3, F_DUPFD_CLOEXEC, 100);
    REQUIRE(::dup2(sock.fd, 3) == 3);
    ::setenv("LISTEN_PID", std::to_string(::getpid()).c_str(), 1);
    ::setenv("LISTEN_FDS", "1", 1);
    ::setenv("LISTEN_FDNAMES", "http", 1);
    const auto fds = tern::listen_fds();
    REQUIRE(fds.size() == 1);
    CHECK(fds[0] == 3);
    CHECK((::fcntl(3, F_GETFD) & FD_CLOEXEC) != 0);
    CHECK(std::getenv("LISTEN_FDS") == nullptr);
    CHECK(std::getenv("LISTEN_PID") == nullptr);
    CHECK(std::getenv("LISTEN_FDNAMES") == nullptr);
    CHECK(tern::listen_fds().empty());

    tern::app app(test_config());
    app.get("/", [](tern::context& ctx) { ctx.text("activated"); });
    app.start_fd(fds[0]);
    CHECK(get(sock.port, "/").body == "activated");
    app.stop();
    if (saved3 >= 0) {
        ::dup2(saved3, 3);
        ::close(saved3);
    } else {
        ::close(3);
    }

    ::setenv("LISTEN_PID", std::to_string(::getpid()).c_str(), 1);
    ::setenv("LISTEN_FDS", "two", 1);
    CHECK_THROWS_AS(tern::listen_fds(), std::invalid_argument);
}
#endif  // !defined(_WIN32)

TEST_CASE("a host name is resolved: start(\"localhost\") serves 127.0.0.1", "[wire][listen]") {
    tern::app app(test_config());
    app.get("/", [](tern::context& ctx) { ctx.text(std::string(ctx.ip())); });
    app.start("localhost", 0);
    CHECK(get(app.port(), "/").body == "127.0.0.1");
    app.stop();
}

TEST_CASE("a host name that does not resolve is an error naming it", "[listen]") {
    tern::app app;
    app.get("/", [](tern::context& ctx) { ctx.text("x"); });
    try {
        app.start("no-such-host.invalid", 0);
        FAIL("start on an unresolvable name did not throw");
    } catch (const std::system_error& e) {
        CHECK(std::string(e.what()).find("no-such-host.invalid") != std::string::npos);
    }
}

TEST_CASE("listening on :: is dual-stack: IPv4 clients are served and ctx.ip() says a.b.c.d",
          "[wire][listen]") {
    namespace platform = tern::detail::platform;
    const platform::native_socket probe = platform::open_client_socket(AF_INET6);
    if (probe == platform::invalid_socket) {
        WARN("no IPv6 on this host: the dual-stack case cannot run");
        return;
    }
    platform::close_socket(probe);
    tern::app app(test_config());
    app.get("/", [](tern::context& ctx) { ctx.text(std::string(ctx.ip())); });
    app.start("::", 0);
    CHECK(get(app.port(), "/").body == "127.0.0.1");
    // And over IPv6 loopback.
    raw_client v6;
    try {
        v6.connect("::1", app.port());
    } catch (const client_error& e) {
        WARN("IPv6 loopback refused: only the IPv4 half was checked (" << e.what() << ")");
    }
    if (v6.is_open()) {
        v6.send(get_request("/"));
        CHECK(v6.read_response().body == "::1");
    }
    app.stop();
}

#if !defined(_WIN32)  // Unix domain sockets and fork: no such thing on Windows
TEST_CASE(
    "a Unix domain socket: served with its permissions, ctx.ip() is \"unix\", removed at "
    "stop",
    "[wire][unix]") {
    temp_dir dir;
    const std::string path = (dir.path / "app.sock").string();
    tern::app app(test_config());
    app.get("/ip", [](tern::context& ctx) { ctx.text(std::string(ctx.ip())); });
    app.start_unix(path, 0600);
    struct stat st {};
    REQUIRE(::stat(path.c_str(), &st) == 0);
    CHECK(S_ISSOCK(st.st_mode));
    CHECK((st.st_mode & 0777) == 0600);
    CHECK(app.port() == 0);
    const auto answer = unix_get(path, "/ip");
    CHECK(answer.status == 200);
    CHECK(answer.body == "unix");
    // A second server on the same live socket is refused; the first keeps serving.
    tern::app second(test_config());
    second.get("/ip", [](tern::context& ctx) { ctx.text("second"); });
    try {
        second.start_unix(path);
        FAIL("a second server took a live Unix socket");
    } catch (const std::system_error& e) {
        CHECK(e.code().value() == EADDRINUSE);
    }
    CHECK(unix_get(path, "/ip").body == "unix");
    app.stop();
    CHECK(::access(path.c_str(), F_OK) != 0);
    CHECK_THROWS_AS(unix_get(path, "/ip"), client_error);
}

namespace {

// Whether a process running as `uid` may connect to the Unix socket at `path`: forks a
// child that drops to `uid` and connects (only async-signal-safe calls after the fork, so
// not raw_client, which allocates).
// The connect's errno, or 0 when it connected.
int connect_as(uid_t uid, const std::string& path) {
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    path.copy(addr.sun_path, sizeof addr.sun_path - 1);
    const pid_t child = ::fork();
    if (child == 0) {
        if (::setgid(uid) != 0 || ::setuid(uid) != 0) ::_exit(255);
        const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
        if (fd < 0) ::_exit(254);
        const int rc = ::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr);
        ::_exit(rc == 0 ? 0 : errno);
    }
    int status = 0;
    ::waitpid(child, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace

TEST_CASE(
    "a Unix socket's permissions keep other users out: 0600 refuses another uid, 0666 "
    "admits it",
    "[wire][unix][hostile]") {
    if (::geteuid() != 0) {
        WARN("skipped: checking another user's access needs root (to become uid 65534)");
        return;
    }
    temp_dir dir;
    std::filesystem::permissions(dir.path, std::filesystem::perms::all);  // anyone may look in
    const std::string owner_only = (dir.path / "private.sock").string();
    const std::string shared = (dir.path / "shared.sock").string();
    tern::app app(test_config());
    app.get("/", [](tern::context& ctx) { ctx.text("served"); });
    app.start_unix(owner_only, 0600);
    tern::app open_app(test_config());
    open_app.get("/", [](tern::context& ctx) { ctx.text("served"); });
    open_app.start_unix(shared, 0666);
    constexpr uid_t nobody = 65534;
    CHECK(connect_as(nobody, owner_only) == EACCES);
    CHECK(connect_as(nobody, shared) == 0);
    CHECK(connect_as(0, owner_only) == 0);
    // Refused or not, the server goes on serving its own users.
    CHECK(unix_get(owner_only, "/").body == "served");
}

TEST_CASE("a stale Unix socket file is replaced, a regular file is never deleted", "[unix]") {
    temp_dir dir;
    const std::string stale = (dir.path / "stale.sock").string();
    {
        // A socket file whose process is gone: bound, then closed without unlinking (a
        // server's socket, not a client's: no raw_client).
        const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        REQUIRE(fd >= 0);
        sockaddr_un addr{};
        addr.sun_family = AF_UNIX;
        stale.copy(addr.sun_path, stale.size());
        REQUIRE(::bind(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0);
        ::close(fd);
    }
    tern::app app(test_config());
    app.get("/", [](tern::context& ctx) { ctx.text("fresh"); });
    app.start_unix(stale);
    CHECK(unix_get(stale, "/").body == "fresh");
    app.stop();

    const auto regular = dir.path / "data.txt";
    dir.write("data.txt", "keep me");
    tern::app other;
    other.get("/", [](tern::context& ctx) { ctx.text("x"); });
    CHECK_THROWS_AS(other.start_unix(regular.string()), std::invalid_argument);
    CHECK(std::filesystem::exists(regular));
    CHECK_THROWS_AS(other.start_unix(std::string(200, 'a')), std::invalid_argument);
}

TEST_CASE(
    "a stop answers requests already sent: one queued behind a busy loop, one unread "
    "on a keep-alive connection",
    "[wire][stop]") {
    tern::app app(test_config());
    app.threads(1);
    app.get("/", [](tern::context& ctx) { ctx.text("ok"); });
    // Holds the one event loop, so what clients send meanwhile waits unread (a deliberate
    // stall: a real handler would use tern::blocking).
    app.get("/stall", [](tern::context& ctx) {
        std::this_thread::sleep_for(600ms);
        ctx.text("stalled");
    });
    app.start("127.0.0.1", 0);
    const auto port = app.port();
    raw_client kept(port);
    kept.send(get_request("/"));
    REQUIRE(kept.read_response().body == "ok");

    raw_client staller(port);
    staller.send(get_request("/stall"));
    std::this_thread::sleep_for(100ms);  // the loop is inside /stall now
    // The stop's message waits behind /stall; it became ready first, so the loop takes it
    // before the requests below (epoll reports in the order things became ready).
    std::thread stopper([&] { app.stop(); });
    std::this_thread::sleep_for(100ms);
    // Sent while the loop cannot read: a second request on the kept connection, and a new
    // connection (the kernel queues it and its request until tern accepts).
    kept.send(get_request("/"));
    raw_client queued(port);
    queued.send(get_request("/"));

    CHECK(staller.read_response().body == "stalled");
    const auto on_kept = kept.read_response();
    CHECK(on_kept.body == "ok");
    CHECK(on_kept.header("Connection") == "close");
    const auto on_queued = queued.read_response();
    CHECK(on_queued.body == "ok");
    CHECK(on_queued.header("Connection") == "close");
    stopper.join();
}
#endif  // !defined(_WIN32)

}  // namespace wire_test_health_and_listeners

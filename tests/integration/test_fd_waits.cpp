// Awaiting the readiness of the application's own descriptors from a coroutine handler
// (tern::wait_readable, tern::wait_writable) over real sockets, with pipes standing in for a
// database client's socket: readiness, the timeout, the client leaving mid-wait, many waits
// on one loop without a thread each, a descriptor that cannot be polled, and a stop.

#if !defined(_WIN32)  // Not on Windows: descriptor waits (tern::wait_readable, reply.when_readable)
                      // fail with ENOTSUP on Windows, and these wait on pipes and eventfds
#include "support/coroutine_support.hpp"
#include "support/eventually.hpp"
#include "support/test_server.hpp"

#include <catch2/catch.hpp>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

namespace wire_test_fd_waits {

using namespace tern_test;
using namespace std::chrono_literals;

namespace {

// A non-blocking pipe: what a client library's socket is to the loop.
struct pipe_pair {
    int read_end = -1;
    int write_end = -1;
    pipe_pair() {
        int fds[2];
        REQUIRE(::pipe2(fds, O_NONBLOCK | O_CLOEXEC) == 0);
        read_end = fds[0];
        write_end = fds[1];
    }
    ~pipe_pair() {
        ::close(read_end);
        if (write_end >= 0) ::close(write_end);
    }
    pipe_pair(const pipe_pair&) = delete;
    pipe_pair& operator=(const pipe_pair&) = delete;
    void write(const std::string& s) const {
        REQUIRE(::write(write_end, s.data(), s.size()) == static_cast<ssize_t>(s.size()));
    }
    std::string read_all() const {
        std::string out;
        char buf[256];
        for (;;) {
            const auto n = ::read(read_end, buf, sizeof buf);
            if (n <= 0) return out;
            out.append(buf, static_cast<std::size_t>(n));
        }
    }
};

const char* name_of(tern::io_ready r) {
    switch (r) {
        case tern::io_ready::ready:
            return "ready";
        case tern::io_ready::timed_out:
            return "timed_out";
        case tern::io_ready::cancelled:
            return "cancelled";
    }
    return "?";
}

}  // namespace

TEST_CASE(
    "a coroutine waits for a descriptor to be readable without holding its loop, then "
    "answers with what it read",
    "[wire][coroutine][fd_wait]") {
    pipe_pair p;
    test_server server(
        [&](tern::app& app) {
            app.get("/wait", [&](tern::context& ctx) -> tern::task {
                const auto r = co_await tern::wait_readable(p.read_end, 5s);
                ctx.text(std::string(name_of(r)) + ": " + p.read_all());
            });
        },
        one_thread());
    raw_client waiter = server.client();
    waiter.send(get_request("/wait"));
    // The only loop serves others while the coroutine waits.
    check_still_serving(server.port());
    std::this_thread::sleep_for(50ms);
    p.write("row 1");
    const auto r = waiter.read_response();
    INFO(describe(r));
    CHECK(r.status == 200);
    CHECK(r.body == "ready: row 1");
}

TEST_CASE("a descriptor already readable, or writable, ends the wait at once",
          "[wire][coroutine][fd_wait]") {
    pipe_pair p;
    p.write("waiting already");
    test_server server([&](tern::app& app) {
        app.get("/both", [&](tern::context& ctx) -> tern::task {
            const auto w = co_await tern::wait_writable(p.write_end, 5s);
            const auto r = co_await tern::wait_readable(p.read_end, 5s);
            ctx.text(std::string(name_of(w)) + " " + name_of(r) + ": " + p.read_all());
        });
    });
    CHECK(fetch(server, get_request("/both")).body == "ready ready: waiting already");
}

TEST_CASE(
    "two requests wait at once on two eventfds of their own, and each is answered when its "
    "own is written",
    "[wire][coroutine][fd_wait]") {
    // Every eventfd (and timerfd, signalfd) is the same anonymous inode to fstat: a rule of
    // one wait per (device, inode) refused the second wait with EEXIST.
    const int first = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    const int second = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    REQUIRE(first >= 0);
    REQUIRE(second >= 0);
    std::atomic<int> waiting{0};
    test_server server(
        [&](tern::app& app) {
            app.get("/wait/{which}", [&](tern::context& ctx) -> tern::task {
                const int fd = ctx.path_param("which") == "1" ? first : second;
                ++waiting;
                const auto r = co_await tern::wait_readable(fd, 5s);
                std::uint64_t count = 0;
                (void)::read(fd, &count, sizeof count);
                ctx.text(std::string(name_of(r)) + " " + std::to_string(count));
            });
        },
        one_thread());
    raw_client one = server.client();
    raw_client two = server.client();
    one.send(get_request("/wait/1"));
    two.send(get_request("/wait/2"));
    REQUIRE(eventually([&] { return waiting == 2; }));
    std::this_thread::sleep_for(50ms);  // both waits begun
    const std::uint64_t add_two = 2;
    const std::uint64_t add_seven = 7;
    REQUIRE(::write(second, &add_seven, sizeof add_seven) == sizeof add_seven);
    const auto r2 = two.read_response();
    INFO(describe(r2));
    CHECK(r2.body == "ready 7");
    REQUIRE(::write(first, &add_two, sizeof add_two) == sizeof add_two);
    const auto r1 = one.read_response();
    INFO(describe(r1));
    CHECK(r1.body == "ready 2");
    ::close(first);
    ::close(second);
}

TEST_CASE("a wait past its timeout resumes with timed_out and the handler answers 504",
          "[wire][coroutine][fd_wait]") {
    pipe_pair p;
    test_server server([&](tern::app& app) {
        app.get("/slow", [&](tern::context& ctx) -> tern::task {
            if (co_await tern::wait_readable(p.read_end, 100ms) != tern::io_ready::ready) {
                throw tern::http_error(504, "the backend did not answer");
            }
            ctx.text("read: " + p.read_all());
        });
    });
    const auto r = fetch(server, get_request("/slow"));
    INFO(describe(r));
    CHECK(r.status == 504);
    CHECK(r.body == "the backend did not answer");
    // The timed-out wait let go of the descriptor: it may be waited on again.
    p.write("late");
    CHECK(fetch(server, get_request("/slow")).body == "read: late");
}

TEST_CASE(
    "a client that leaves mid-wait cancels the wait: the coroutine resumes with cancelled "
    "and the server goes on",
    "[wire][coroutine][fd_wait]") {
    pipe_pair p;
    std::atomic<int> cancelled{0};
    std::atomic<int> ended{0};
    test_server server([&](tern::app& app) {
        app.get("/forever", [&](tern::context& ctx) -> tern::task {
            frame_counter count{ended};
            const auto r = co_await tern::wait_readable(p.read_end);  // no timeout
            if (r == tern::io_ready::cancelled) ++cancelled;
            // A later wait on a departed client does not suspend.
            if (co_await tern::wait_readable(p.read_end) == tern::io_ready::cancelled) {
                ++cancelled;
            }
            ctx.text("nobody listens");
        });
    });
    {
        raw_client c = server.client();
        c.send(get_request("/forever"));
        std::this_thread::sleep_for(50ms);
    }  // closed during the wait
    CHECK(eventually([&] { return ended == 1; }));
    CHECK(cancelled == 2);
    check_still_serving(server.port());
}

TEST_CASE("two hundred waits on one loop, each on its own pipe, all answer",
          "[wire][coroutine][fd_wait]") {
    constexpr std::size_t n = 200;
    std::vector<std::unique_ptr<pipe_pair>> pipes;
    for (std::size_t i = 0; i < n; ++i) pipes.push_back(std::make_unique<pipe_pair>());
    test_server server(
        [&](tern::app& app) {
            app.get("/p/{i}", [&](tern::context& ctx) -> tern::task {
                const auto& p = *pipes.at(std::stoul(std::string(ctx.path_param("i"))));
                const auto r = co_await tern::wait_readable(p.read_end, 10s);
                ctx.text(std::string(name_of(r)) + " " + p.read_all());
            });
        },
        one_thread());
    auto clients = open_clients(server.port(), n);
    for (std::size_t i = 0; i < n; ++i) clients[i].send(get_request("/p/" + std::to_string(i)));
    std::this_thread::sleep_for(100ms);
    for (std::size_t i = 0; i < n; ++i) pipes[i]->write(std::to_string(i));
    std::size_t right = 0;
    for (std::size_t i = 0; i < n; ++i) {
        right += clients[i].read_response().body == "ready " + std::to_string(i) ? 1U : 0U;
    }
    CHECK(right == n);
}

TEST_CASE("a descriptor that cannot be polled throws at the co_await: 500, the loop goes on",
          "[wire][coroutine][fd_wait]") {
    const std::string path = "/tmp/tern-fd-wait-regular-" + std::to_string(::getpid());
    const int file = ::open(path.c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0600);
    REQUIRE(file >= 0);
    ::unlink(path.c_str());
    std::atomic<int> code{0};
    test_server server([&](tern::app& app) {
        app.get("/file", [&](tern::context& ctx) -> tern::task {
            try {
                co_await tern::wait_readable(file, 1s);
            } catch (const std::system_error& e) {
                code = e.code().value();
                throw;
            }
            ctx.text("unexpected");
        });
    });
    CHECK(fetch(server, get_request("/file")).status == 500);
    CHECK(code == EPERM);
    check_still_serving(server.port());
    ::close(file);
}

TEST_CASE("stop() during a wait ends the coroutine at the drain deadline",
          "[wire][coroutine][fd_wait]") {
    pipe_pair p;
    std::atomic<int> ended{0};
    std::atomic<bool> woke_ready{false};
    tern::config cfg = test_config();
    cfg.timeouts.drain = 300ms;
    test_server server(
        [&](tern::app& app) {
            app.get("/long", [&](tern::context& ctx) -> tern::task {
                frame_counter count{ended};
                if (co_await tern::wait_readable(p.read_end, 60s) != tern::io_ready::cancelled) {
                    woke_ready = true;
                }
                ctx.text("never");
            });
        },
        cfg);
    raw_client c = server.client();
    c.send(get_request("/long"));
    std::this_thread::sleep_for(50ms);
    server.stop();  // returns: the wait does not hold it for 60 s
    // The drain's end closes the connection (a departure: the wait ends `cancelled` and the
    // coroutine runs to its end) or drops the wait with the frame, whichever the loop takes
    // first (the io_uring backend orders them differently); either way the frame is gone.
    CHECK(ended == 1);
    CHECK_FALSE(woke_ready);
    CHECK(c.closed_by_peer());
}

TEST_CASE(
    "a deferred handler waits with a callback: readiness, the timeout, and a descriptor that "
    "cannot be polled failing the response",
    "[wire][deferred][fd_wait]") {
    pipe_pair p;
    const std::string path = "/tmp/tern-fd-wait-cb-" + std::to_string(::getpid());
    const int file = ::open(path.c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0600);
    REQUIRE(file >= 0);
    ::unlink(path.c_str());
    test_server server(
        [&](tern::app& app) {
            app.get("/cb", [&](tern::context& ctx) {
                auto reply = ctx.defer();
                const auto timeout = std::chrono::milliseconds(ctx.query_param<long>("ms", 5000));
                reply.when_readable(p.read_end, timeout, [reply, &p](tern::io_ready r) {
                    reply.complete([r, &p](tern::context& c) {
                        c.text(std::string(name_of(r)) + ": " + p.read_all());
                    });
                });
            });
            app.get("/file", [&](tern::context& ctx) {
                auto reply = ctx.defer();
                reply.when_writable(file, std::chrono::seconds(1), [reply](tern::io_ready) {
                    reply.complete([](tern::context& c) { c.text("unexpected"); });
                });
            });
        },
        one_thread());
    raw_client waiter = server.client();
    waiter.send(get_request("/cb"));
    check_still_serving(server.port());
    p.write("from the pipe");
    CHECK(waiter.read_response().body == "ready: from the pipe");
    CHECK(fetch(server, get_request("/cb?ms=100")).body == "timed_out: ");
    const auto failed = fetch(server, get_request("/file"));
    INFO(describe(failed));
    CHECK(failed.status == 500);
    check_still_serving(server.port());
    ::close(file);
}

TEST_CASE("a deferred wait whose client leaves gets cancelled, and the server goes on",
          "[wire][deferred][fd_wait]") {
    pipe_pair p;
    std::atomic<int> cancelled{0};
    test_server server([&](tern::app& app) {
        app.get("/forever", [&](tern::context& ctx) {
            auto reply = ctx.defer();
            reply.when_readable(p.read_end, {}, [reply, &cancelled](tern::io_ready r) {
                if (r == tern::io_ready::cancelled) ++cancelled;
                reply.complete();  // nobody to send it to: refused, harmless
            });
        });
    });
    {
        raw_client c = server.client();
        c.send(get_request("/forever"));
        std::this_thread::sleep_for(50ms);
    }  // closed during the wait
    CHECK(eventually([&] { return cancelled == 1; }));
    check_still_serving(server.port());
}

namespace {

// The port a socket of this process is bound (`local`) or connected (peer) to; 0 when it is
// not an IPv4 socket.
std::uint16_t port_of(int fd, bool local) {
    sockaddr_in a{};
    socklen_t len = sizeof a;
    const int rc = local ? ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len)
                         : ::getpeername(fd, reinterpret_cast<sockaddr*>(&a), &len);
    return rc == 0 && a.sin_family == AF_INET ? ntohs(a.sin_port) : 0;
}

// Sends `GET /__alive` on `fd` and reads until the answer's body arrived, or 3 s passed.
bool answered_alive(int fd) {
    const std::string request = get_request(alive_path);
    if (::send(fd, request.data(), request.size(), MSG_NOSIGNAL) !=
        static_cast<ssize_t>(request.size())) {
        return false;
    }
    std::string got;
    const auto until = std::chrono::steady_clock::now() + 3s;
    while (got.find("\r\n\r\nalive") == std::string::npos) {
        if (std::chrono::steady_clock::now() >= until) return false;
        pollfd p{fd, POLLIN, 0};
        if (::poll(&p, 1, 50) <= 0) continue;
        char buf[1024];
        const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
        if (n <= 0) return false;
        got.append(buf, static_cast<std::size_t>(n));
    }
    return true;
}

}  // namespace

TEST_CASE(
    "a descriptor the application closes during a wait: the client whose socket takes its "
    "number is still answered after the wait ends, and a stop drains",
    "[wire][coroutine][fd_wait]") {
    // Issue 50, item 6: at the wait's end tern took the number out of the loop's epoll set,
    // where by then it named another client's socket, which was never answered again.
    std::atomic<int> waited{-1};
    std::atomic<bool> closed{false};
    std::thread closer;
    tern::config cfg = one_thread();  // the new client's socket joins the same epoll set
    cfg.timeouts.drain = 10s;
    test_server server(
        [&](tern::app& app) {
            app.get("/wait", [&](tern::context& ctx) -> tern::task {
                // Made here, so its read end is the lowest free number.
                int fds[2];
                if (::pipe2(fds, O_NONBLOCK | O_CLOEXEC) != 0) throw std::runtime_error("pipe");
                waited = fds[0];
                // Closed by the application while the wait is pending.
                closer = std::thread([&closed, read_end = fds[0]] {
                    std::this_thread::sleep_for(100ms);
                    ::close(read_end);
                    closed = true;
                });
                const auto r = co_await tern::wait_readable(fds[0], 1s);
                ::close(fds[1]);
                ctx.text(name_of(r));
            });
        },
        cfg);
    // The next client's own socket is made first, so that the number the application frees
    // goes to the server's end of its connection.
    const int next = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    REQUIRE(next >= 0);
    raw_client waiter = server.client();
    waiter.send(get_request("/wait"));
    REQUIRE(eventually([&] { return closed.load(); }));
    closer.join();
    sockaddr_in to{};
    to.sin_family = AF_INET;
    to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    to.sin_port = htons(server.port());
    REQUIRE(::connect(next, reinterpret_cast<sockaddr*>(&to), sizeof to) == 0);
    CHECK(answered_alive(next));  // accepted, so the server's end now exists
    // The number the wait was given is now the server's end of that connection.
    REQUIRE(port_of(waited, true) == server.port());
    REQUIRE(port_of(waited, false) == port_of(next, true));
    const auto r = waiter.read_response();
    CHECK(r.body == "timed_out");
    CHECK(answered_alive(next));
    const auto asked = std::chrono::steady_clock::now();
    server.stop();
    // The drain closes the idle connection at once; it does not wait out its deadline.
    CHECK(std::chrono::steady_clock::now() - asked < cfg.timeouts.drain / 2);
    char byte = 0;
    CHECK(::recv(next, &byte, 1, 0) == 0);
    ::close(next);
}

}  // namespace wire_test_fd_waits
#endif  // !defined(_WIN32)

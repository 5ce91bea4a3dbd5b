// The out-of-memory policy (docs/architecture.md, "Failures"), checked with real failures:
// a server in a child process has every allocation fail from the N-th one on, counted from
// inside a request, for many N, so the failure lands at a different point of the serving
// path each time (the handler, error shaping, the writer, the next accept). Each time the
// process must end with SIGABRT (std::terminate) within a few seconds: a catch block that
// swallowed the std::bad_alloc would leave it running, serving nothing. A control run
// without failures answers 200 and stops on SIGTERM.
//
// Its own executable: it replaces the global operator new. The parent's requests go through
// the wire tests' raw_client (its allocations never fail: only the child arms the count).

#include <tern/tern.hpp>

#include <pthread.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <new>
#include <string>
#include <thread>

#include "support/raw_client.hpp"

namespace {

// Allocations left before every one fails; negative: none fails.
std::atomic<long> allocations_left{-1};

void* allocate(std::size_t size) noexcept {
    if (allocations_left.load(std::memory_order_relaxed) >= 0 &&
        allocations_left.fetch_sub(1, std::memory_order_relaxed) <= 0) {
        allocations_left.store(0, std::memory_order_relaxed);
        return nullptr;
    }
    return std::malloc(size == 0 ? 1 : size);
}

}  // namespace

void* operator new(std::size_t size) {
    if (void* p = allocate(size)) return p;
    throw std::bad_alloc();
}
void* operator new[](std::size_t size) { return operator new(size); }
void* operator new(std::size_t size, const std::nothrow_t&) noexcept { return allocate(size); }
void* operator new[](std::size_t size, const std::nothrow_t&) noexcept { return allocate(size); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }

namespace {

// The child: a server whose GET /arm/{n} makes every allocation from the n-th on fail.
[[noreturn]] void serve(int port_pipe) {
    const rlimit no_core{0, 0};
    setrlimit(RLIMIT_CORE, &no_core);
    // SIGTERM (the control run's end) is taken by sigwait below: blocked in every thread.
    sigset_t term;
    sigemptyset(&term);
    sigaddset(&term, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &term, nullptr);
    tern::config cfg;
    cfg.threads = 1;
    tern::app app(cfg);
    app.get("/", [](tern::context& ctx) { ctx.text("hello"); });
    app.get("/arm/{n}", [](tern::context& ctx) {
        allocations_left.store(ctx.path_param<long>("n"));
        ctx.json_text(R"({"armed": true, "padding": "a body long enough to allocate"})");
    });
    app.start("127.0.0.1", 0);
    const std::uint16_t port = app.port();
    if (write(port_pipe, &port, sizeof port) != sizeof port) std::_Exit(3);
    int sig = 0;
    sigwait(&term, &sig);  // the control run ends here
    app.stop();
    std::_Exit(0);
}

// Sends `request` on a new connection and returns what came back before the close or
// `wait`, whichever is first. Empty when the server could not be reached.
std::string exchange(std::uint16_t port, const std::string& request,
                     std::chrono::milliseconds wait) {
    tern_test::raw_client c;
    try {
        c.connect(port);
        c.send(request);
        c.closed_by_peer(wait);
    } catch (const tern_test::client_error&) {
        // Refused, or reset by a server that ended: what came before is the answer.
    }
    return c.buffered();
}

struct child {
    pid_t pid = -1;
    std::uint16_t port = 0;
};

child start_child() {
    int fds[2];
    if (pipe(fds) != 0) std::abort();
    const pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        serve(fds[1]);
    }
    close(fds[1]);
    child c{pid, 0};
    if (read(fds[0], &c.port, sizeof c.port) != sizeof c.port) c.port = 0;
    close(fds[0]);
    return c;
}

// How the child ended within `wait`: its wait status, or -1 (killed here) when it did not.
int wait_for_end(pid_t pid, std::chrono::seconds wait) {
    const auto until = std::chrono::steady_clock::now() + wait;
    int status = 0;
    while (std::chrono::steady_clock::now() < until) {
        if (waitpid(pid, &status, WNOHANG) == pid) return status;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
    return -1;
}

const char* const get_root = "GET / HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n";

}  // namespace

int main() {
    int failures = 0;

    {  // control: without failing allocations it serves and stops cleanly
        const child c = start_child();
        const std::string got = exchange(c.port, get_root, std::chrono::seconds(5));
        kill(c.pid, SIGTERM);
        const int status = wait_for_end(c.pid, std::chrono::seconds(10));
        const bool served =
            got.rfind("HTTP/1.1 200", 0) == 0 && got.find("hello") != std::string::npos;
        if (!served || status == -1 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
            std::printf("FAIL control: answer %s, exit status %d\n", served ? "200" : "missing",
                        status);
            ++failures;
        }
    }

    int runs = 0;
    for (long n = 0; n <= 160; n += (n < 16 ? 1 : n < 64 ? 4 : 16)) {
        ++runs;
        const child c = start_child();
        const std::string armed =
            "GET /arm/" + std::to_string(n) + " HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n";
        exchange(c.port, armed, std::chrono::seconds(2));
        // Requests on new connections until the failures begin: tern allocates little per
        // request once warm, but every new connection allocates. Each later failure point
        // is reached with more of them.
        int status = 0;
        bool ended = false;
        for (long sent = 0; sent <= n + 1 && !ended; ++sent) {
            exchange(c.port, get_root, std::chrono::seconds(1));
            ended = waitpid(c.pid, &status, WNOHANG) == c.pid;
        }
        if (!ended) status = wait_for_end(c.pid, std::chrono::seconds(10));
        if (status == -1) {
            std::printf("FAIL n=%ld: the process neither served on nor ended (killed)\n", n);
            ++failures;
        } else if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGABRT) {
            std::printf("FAIL n=%ld: ended with wait status %d, not SIGABRT\n", n, status);
            ++failures;
        }
    }
    std::printf("oom policy: %d runs with failing allocations, %d failures\n", runs, failures);
    return failures == 0 ? 0 : 1;
}

// A coroutine route that talks to PostgreSQL through libpq's non-blocking API on its event
// loop, with no blocking pool and one loop thread (tests/clients/pg_wait.py): each request
// connects (PQconnectStart/PQconnectPoll), sends its query, and awaits the socket's
// readiness between steps with tern::wait_readable / wait_writable. docs/async.md quotes
// its query loop.
//
//   pg_wait_app PORT CONNINFO
//
// GET /sum?a=A&b=B&sleep=S answers A+B after the database slept S seconds (pg_sleep).

#include <tern/tern.hpp>

#include <libpq-fe.h>

#include <chrono>
#include <cstdio>
#include <memory>
#include <string>

using namespace std::chrono_literals;

namespace {

struct pq_finish {
    void operator()(PGconn* c) const noexcept { PQfinish(c); }
};
using connection = std::unique_ptr<PGconn, pq_finish>;

}  // namespace

int main(int argc, char** argv) {
    if (argc != 3) {
        std::fprintf(stderr, "usage: pg_wait_app PORT CONNINFO\n");
        return 2;
    }
    const auto port = static_cast<std::uint16_t>(std::stoi(argv[1]));
    const std::string conninfo = argv[2];
    tern::app app;
    app.threads(1);
    app.get("/sum", [conninfo](tern::context& ctx) -> tern::task {
        const std::string a = std::to_string(ctx.query_param<int>("a", 0));
        const std::string b = std::to_string(ctx.query_param<int>("b", 0));
        const std::string s = std::to_string(ctx.query_param<double>("sleep", 0));
        // Connects without blocking the loop: each PQconnectPoll step says which readiness
        // it needs (tern::task cannot be awaited, so the steps are here, not in a helper).
        const connection owned(PQconnectStart(conninfo.c_str()));
        PGconn* conn = owned.get();
        if (conn == nullptr || PQstatus(conn) == CONNECTION_BAD) {
            throw tern::http_error(503, "the database is not reachable");
        }
        for (auto step = PGRES_POLLING_WRITING; step != PGRES_POLLING_OK;
             step = PQconnectPoll(conn)) {
            if (step == PGRES_POLLING_FAILED) throw tern::http_error(503, PQerrorMessage(conn));
            const auto ready = step == PGRES_POLLING_READING
                                   ? co_await tern::wait_readable(PQsocket(conn), 5s)
                                   : co_await tern::wait_writable(PQsocket(conn), 5s);
            if (ready != tern::io_ready::ready) throw tern::http_error(504, "connecting timed out");
        }
        PQsetnonblocking(conn, 1);
        const char* params[] = {a.c_str(), b.c_str(), s.c_str()};
        const char* sql = "SELECT $1::int + $2::int FROM pg_sleep($3::float8)";
        PQsendQueryParams(conn, sql, 3, nullptr, params, nullptr, nullptr, 0);
        while (PQflush(conn) == 1) co_await tern::wait_writable(PQsocket(conn), 2s);
        for (;;) {
            PQconsumeInput(conn);
            if (!PQisBusy(conn)) break;
            if (co_await tern::wait_readable(PQsocket(conn), 2s) != tern::io_ready::ready) {
                throw tern::http_error(504, "the database did not answer");
            }
        }
        std::string answer;
        while (PGresult* res = PQgetResult(conn)) {
            if (PQresultStatus(res) == PGRES_TUPLES_OK && PQntuples(res) == 1) {
                answer = PQgetvalue(res, 0, 0);
            } else if (answer.empty()) {
                answer = std::string("error: ") + PQresultErrorMessage(res);
            }
            PQclear(res);
        }
        ctx.text(answer);
    });
    std::printf("pg_wait_app: listening on %u\n", port);
    std::fflush(stdout);
    app.listen("127.0.0.1", port);
}

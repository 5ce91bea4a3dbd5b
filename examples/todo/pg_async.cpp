#include "pg_async.hpp"

#include "store.hpp"

#include <poll.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <charconv>
#include <cstdio>
#include <deque>
#include <memory>
#include <string_view>
#include <utility>

namespace todo_app {

namespace {

constexpr const char* schema_sql =
    "CREATE TABLE IF NOT EXISTS todos ("
    " id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,"
    " title TEXT NOT NULL,"
    " done BOOLEAN NOT NULL)";

std::atomic<std::uint64_t> next_generation{1};

// libpq's message for the last failure, on one line for the log.
std::string error_text(PGconn* c) {
    std::string text = c != nullptr ? PQerrorMessage(c) : "out of memory";
    for (char& ch : text) {
        if (ch == '\n' || ch == '\t') ch = ' ';
    }
    while (!text.empty() && text.back() == ' ') text.pop_back();
    return text;
}

// The server's notices and warnings (and the error it sends when it ends a session) go to
// the log with the program's prefix, instead of libpq's bare default.
void log_notice(void*, const char* message) {
    std::fprintf(stderr, "todo: postgresql says: %s", message);
}

// Keywords are read in order and the last one wins: the defaults come before the expanded
// conninfo ("dbname" with expand_dbname), so the user's own values win.
constexpr std::array<const char*, 5> connect_keys{"connect_timeout", "client_encoding",
                                                  "application_name", "dbname", nullptr};

// One connection of a loop, running one statement at a time: each step does what the
// socket allows now and says what to wait for.
class pg_link {
public:
    enum class want { done, read, write };

    explicit pg_link(const std::string& conninfo) : conninfo_(conninfo) {}
    ~pg_link() { close(); }
    pg_link(const pg_link&) = delete;
    pg_link& operator=(const pg_link&) = delete;

    // Starts `call` (connecting first when there is no usable connection).
    want begin(const pg_call& call) {
        call_ = &call;
        result_.reset();
        if (conn_ != nullptr && !idle_usable()) close();
        if (conn_ == nullptr) return connect();
        return send();
    }
    // Goes on after the wait said ready.
    want resume() {
        switch (phase_) {
            case phase::connecting:
                return poll_connect();
            case phase::flushing:
                return flush();
            case phase::reading:
                return read();
            case phase::idle:
                break;
        }
        return want::done;
    }
    int fd() const noexcept { return PQsocket(conn_); }
    const PGresult* result() const noexcept { return result_.get(); }
    // In the middle of a statement: its answer is still to come.
    bool mid_statement() const noexcept { return phase_ != phase::idle; }
    // The statement will not be finished (a timeout, the client left, the server stops): the
    // connection is closed, the next begin() opens another.
    void close() noexcept {
        if (conn_ != nullptr) PQfinish(conn_);
        conn_ = nullptr;
        phase_ = phase::idle;
    }

    bool busy = false;

private:
    enum class phase { idle, connecting, flushing, reading };
    struct result_clearer {
        void operator()(PGresult* r) const noexcept { PQclear(r); }
    };

    want connect() {
        const std::array<const char*, 5> values{"5", "UTF8", "tern-todo", conninfo_.c_str(),
                                                nullptr};
        conn_ = PQconnectStartParams(connect_keys.data(), values.data(), 1);
        if (conn_ == nullptr || PQstatus(conn_) == CONNECTION_BAD) {
            failed("cannot connect: " + error_text(conn_));
        }
        PQsetNoticeProcessor(conn_, log_notice, nullptr);
        phase_ = phase::connecting;
        return want::write;  // libpq: wait until writable, then PQconnectPoll
    }
    want poll_connect() {
        switch (PQconnectPoll(conn_)) {
            case PGRES_POLLING_READING:
                return want::read;
            case PGRES_POLLING_WRITING:
                return want::write;
            case PGRES_POLLING_OK:
                if (PQsetnonblocking(conn_, 1) != 0) failed("nonblocking: " + error_text(conn_));
                return send();
            default:
                failed("cannot connect: " + error_text(conn_));
        }
    }
    want send() {
        std::vector<const char*> values;
        values.reserve(call_->params.size());
        for (const auto& p : call_->params) values.push_back(p.c_str());
        if (PQsendQueryParams(conn_, call_->sql, static_cast<int>(values.size()), nullptr,
                              values.data(), nullptr, nullptr, 0) == 0) {
            failed("send: " + error_text(conn_));
        }
        phase_ = phase::flushing;
        return flush();
    }
    want flush() {
        const int pending = PQflush(conn_);
        if (pending < 0) failed("send: " + error_text(conn_));
        if (pending == 1) return want::write;
        phase_ = phase::reading;
        return read();
    }
    want read() {
        if (PQconsumeInput(conn_) == 0) failed("read: " + error_text(conn_));
        if (PQisBusy(conn_) != 0) return want::read;
        result_.reset(PQgetResult(conn_));
        while (PGresult* more = PQgetResult(conn_)) PQclear(more);
        phase_ = phase::idle;
        const ExecStatusType status =
            result_ != nullptr ? PQresultStatus(result_.get()) : PGRES_FATAL_ERROR;
        if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK) {
            // The statement failed (the table was dropped, say); the connection is kept
            // while the server still talks to it.
            std::string what = "postgresql: " + error_text(conn_);
            if (PQstatus(conn_) != CONNECTION_OK) close();
            throw db_error(what);
        }
        return want::done;
    }
    [[noreturn]] void failed(const std::string& what) {
        std::string message = "postgresql: " + what;
        close();
        throw db_error(message);
    }
    // Whether an idle connection can take the next statement. A server that ended it (a
    // restart, a fast shutdown) has sent an error and closed the socket; libpq learns that
    // only by reading, so an idle socket with input waiting is read first. Without this, a
    // connection left from before a database restart would fail its next statement (a 503)
    // although the server is back.
    bool idle_usable() noexcept {
        if (PQstatus(conn_) != CONNECTION_OK) return false;
        for (int reads = 0; reads < 8; ++reads) {
            pollfd p{PQsocket(conn_), POLLIN, 0};
            if (::poll(&p, 1, 0) <= 0) return true;
            if (PQconsumeInput(conn_) == 0 || PQstatus(conn_) != CONNECTION_OK) return false;
            while (PGnotify* n = PQnotifies(conn_)) PQfreemem(n);
        }
        return true;
    }

    const std::string& conninfo_;
    PGconn* conn_ = nullptr;
    std::unique_ptr<PGresult, result_clearer> result_;
    const pg_call* call_ = nullptr;
    phase phase_ = phase::idle;
};

// The connections of the calling event loop (a loop is one thread), and the requests that
// wait for one, woken in order.
struct loop_links {
    std::uint64_t generation = 0;
    std::vector<std::unique_ptr<pg_link>> links;
    std::deque<tern::resume_with<bool>> waiting;
};

loop_links& links_here(std::uint64_t generation) {
    thread_local loop_links mine;
    if (mine.generation != generation) {
        mine.links.clear();
        mine.waiting.clear();
        mine.generation = generation;
    }
    return mine;
}

// A free connection of this loop (opening another while there are fewer than `most`), or
// null.
pg_link* take(loop_links& mine, const std::string& conninfo, std::size_t most) {
    for (auto& l : mine.links) {
        if (!l->busy) {
            l->busy = true;
            return l.get();
        }
    }
    if (mine.links.size() >= most) return nullptr;
    mine.links.push_back(std::make_unique<pg_link>(conninfo));
    mine.links.back()->busy = true;
    return mine.links.back().get();
}

// Gives the connection back when the statement's coroutine is done with it, however it
// ended (answered, threw, or its frame was dropped at a stop), and wakes the next request
// waiting for one.
struct lease {
    loop_links& mine;
    pg_link& held;
    ~lease() {
        if (held.mid_statement()) held.close();
        held.busy = false;
        if (!mine.waiting.empty()) {
            auto next = std::move(mine.waiting.front());
            mine.waiting.pop_front();
            next(true);
        }
    }
};

}  // namespace

std::vector<todo> todos_of(const PGresult* r) {
    std::vector<todo> out;
    const int n = PQntuples(r);
    out.reserve(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) {
        todo t;
        const std::string_view id(PQgetvalue(r, i, 0));
        const auto [end, ec] = std::from_chars(id.data(), id.data() + id.size(), t.id);
        if (ec != std::errc{} || end != id.data() + id.size()) {
            throw db_error("postgresql: not an integer in a result: " + std::string(id));
        }
        t.title.assign(PQgetvalue(r, i, 1), static_cast<std::size_t>(PQgetlength(r, i, 1)));
        t.done = std::string_view(PQgetvalue(r, i, 2)) == "t";
        out.push_back(std::move(t));
    }
    return out;
}

pg_async::pg_async(std::string conninfo, std::size_t per_loop, std::size_t max_waiting,
                   std::chrono::milliseconds timeout)
    : conninfo_(std::move(conninfo)),
      per_loop_(std::max<std::size_t>(per_loop, 1)),
      max_waiting_(max_waiting),
      timeout_(timeout),
      generation_(next_generation++) {
    // The table, on a blocking connection of its own (nothing is served yet).
    const std::array<const char*, 5> values{"5", "UTF8", "tern-todo", conninfo_.c_str(), nullptr};
    PGconn* c = PQconnectdbParams(connect_keys.data(), values.data(), 1);
    const std::unique_ptr<PGconn, void (*)(PGconn*)> owned(c, PQfinish);
    if (c == nullptr || PQstatus(c) != CONNECTION_OK) {
        throw db_error("postgresql: cannot connect: " + error_text(c));
    }
    PQsetNoticeProcessor(c, log_notice, nullptr);
    for (const char* sql : {"SET client_min_messages TO warning", schema_sql}) {
        const std::unique_ptr<PGresult, void (*)(PGresult*)> r(PQexec(c, sql), PQclear);
        if (!r || PQresultStatus(r.get()) != PGRES_COMMAND_OK) {
            throw db_error("postgresql: create table: " + error_text(c));
        }
    }
}

tern::task pg_async::run(tern::context& ctx, pg_call call, pg_answer answer, pg_failure failure) {
    loop_links& mine = links_here(generation_);
    const auto deadline = std::chrono::steady_clock::now() + timeout_;
    try {
        pg_link* held = take(mine, conninfo_, per_loop_);
        bool woken = false;
        while (held == nullptr) {
            if (!woken && mine.waiting.size() >= max_waiting_) {
                throw db_error("postgresql: " + std::to_string(max_waiting_) +
                               " requests of this loop already wait for a connection");
            }
            // A request woken for a connection that another took meanwhile waits at the
            // front again, so the order of arrival holds.
            co_await tern::callback_result<bool>([&mine, woken](tern::resume_with<bool> wake) {
                if (woken) {
                    mine.waiting.push_front(std::move(wake));
                } else {
                    mine.waiting.push_back(std::move(wake));
                }
            });
            woken = true;
            held = take(mine, conninfo_, per_loop_);
        }
        const lease guard{mine, *held};
        auto want = held->begin(call);
        while (want != pg_link::want::done) {
            const auto left = std::max<std::chrono::nanoseconds>(
                deadline - std::chrono::steady_clock::now(), std::chrono::milliseconds(1));
            const tern::io_ready r = want == pg_link::want::write
                                         ? co_await tern::wait_writable(held->fd(), left)
                                         : co_await tern::wait_readable(held->fd(), left);
            if (r == tern::io_ready::timed_out) {
                throw db_error("postgresql: no answer within " + std::to_string(timeout_.count()) +
                               " ms");
            }
            if (r == tern::io_ready::cancelled) {
                throw db_error("postgresql: the client left before the answer");
            }
            want = held->resume();
        }
        answer(ctx, held->result());
    } catch (const db_error& e) {
        if (!failure) throw;
        failure(ctx, e);
    }
}

}  // namespace todo_app

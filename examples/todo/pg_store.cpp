#include "pg_store.hpp"

#include <libpq-fe.h>
#include <poll.h>

#include <array>
#include <atomic>
#include <charconv>
#include <cstdio>
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

// The statements every connection prepares (PQprepare), by name. Parameters are sent
// separately from the SQL (PQexecPrepared), as text.
struct statement {
    const char* name;
    const char* sql;
    int parameters;
};
constexpr statement list_sql{"todo_list",
                             "SELECT id, title, done FROM todos ORDER BY id DESC "
                             "LIMIT $1::bigint OFFSET $2::bigint",
                             2};
constexpr statement get_sql{"todo_get", "SELECT id, title, done FROM todos WHERE id = $1::bigint",
                            1};
constexpr statement add_sql{"todo_add",
                            "INSERT INTO todos (title, done) VALUES ($1::text, $2::boolean) "
                            "RETURNING id, title, done",
                            2};
constexpr statement replace_sql{"todo_replace",
                                "UPDATE todos SET title = $2::text, done = $3::boolean "
                                "WHERE id = $1::bigint RETURNING id, title, done",
                                3};
constexpr statement remove_sql{"todo_remove",
                               "DELETE FROM todos WHERE id = $1::bigint RETURNING id", 1};
constexpr statement ping_sql{"todo_ping", "SELECT EXISTS (SELECT 1 FROM todos)", 0};
constexpr std::array all_statements{list_sql, get_sql, add_sql, replace_sql, remove_sql, ping_sql};

std::atomic<std::uint64_t> next_generation{1};

struct conn_closer {
    void operator()(PGconn* c) const noexcept { PQfinish(c); }
};
struct result_clearer {
    void operator()(PGresult* r) const noexcept { PQclear(r); }
};
using conn_ptr = std::unique_ptr<PGconn, conn_closer>;
using result_ptr = std::unique_ptr<PGresult, result_clearer>;

// libpq's message for the last failure, on one line for the log.
std::string error_text(PGconn* c) {
    std::string text = PQerrorMessage(c);
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

std::int64_t to_int64(const char* text) {
    const std::string_view s(text);
    std::int64_t value = 0;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
    if (ec != std::errc{} || end != s.data() + s.size()) {
        throw db_error("postgresql: not an integer in a result: " + std::string(s));
    }
    return value;
}

std::vector<todo> rows_of(const PGresult* r) {
    std::vector<todo> out;
    const int n = PQntuples(r);
    out.reserve(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) {
        todo t;
        t.id = to_int64(PQgetvalue(r, i, 0));
        t.title.assign(PQgetvalue(r, i, 1), static_cast<std::size_t>(PQgetlength(r, i, 1)));
        t.done = std::string_view(PQgetvalue(r, i, 2)) == "t";
        out.push_back(std::move(t));
    }
    return out;
}

}  // namespace

class pg_store::connection {
public:
    // With `set_up`, first creates the table when missing.
    connection(const std::string& conninfo, std::uint64_t generation, bool set_up = false)
        : generation_(generation) {
        // Keywords are read in order and the last one wins: the defaults come before the
        // expanded conninfo ("dbname" with expand_dbname), so the user's own values win.
        const std::array<const char*, 5> keys{"connect_timeout", "client_encoding",
                                              "application_name", "dbname", nullptr};
        const std::array<const char*, 5> values{"5", "UTF8", "tern-todo", conninfo.c_str(),
                                                nullptr};
        conn_.reset(PQconnectdbParams(keys.data(), values.data(), 1));
        if (!conn_) throw db_error("postgresql: out of memory");
        if (PQstatus(conn_.get()) != CONNECTION_OK) {
            throw db_error("postgresql: cannot connect: " + error_text(conn_.get()));
        }
        PQsetNoticeProcessor(conn_.get(), log_notice, nullptr);
        if (set_up) {
            // Constant SQL, no input. The notice that the table exists is not news.
            const result_ptr quiet(PQexec(conn_.get(), "SET client_min_messages TO warning"));
            check(quiet.get(), "set client_min_messages");
            const result_ptr r(PQexec(conn_.get(), schema_sql));
            check(r.get(), "create table");
        }
        for (const statement& s : all_statements) {
            const result_ptr r(PQprepare(conn_.get(), s.name, s.sql, s.parameters, nullptr));
            check(r.get(), s.name);
        }
    }

    std::uint64_t generation() const noexcept { return generation_; }
    // Whether the connection can take the next statement. A server that ended an idle
    // connection (a restart, a fast shutdown) has sent an error and closed the socket;
    // libpq learns that only by reading, so an idle socket with input waiting is read first.
    // Without this, a connection left from before a database restart would fail its next
    // statement (an answer of 503) although the server is back.
    bool usable() const noexcept {
        PGconn* c = conn_.get();
        if (PQstatus(c) != CONNECTION_OK) return false;
        // The error and the end of input may come apart: read while there is input.
        for (int reads = 0; reads < 8; ++reads) {
            pollfd p{PQsocket(c), POLLIN, 0};
            if (::poll(&p, 1, 0) <= 0) return true;
            if (PQconsumeInput(c) == 0 || PQstatus(c) != CONNECTION_OK) return false;
            while (PGnotify* n = PQnotifies(c)) PQfreemem(n);
        }
        return true;
    }

    // Runs a prepared statement with text parameters and returns its result.
    template <std::size_t N>
    result_ptr run(const statement& s, const std::array<const char*, N>& params) {
        result_ptr r(PQexecPrepared(conn_.get(), s.name, static_cast<int>(N),
                                    N == 0 ? nullptr : params.data(), nullptr, nullptr, 0));
        check(r.get(), s.name);
        return r;
    }

private:
    void check(const PGresult* r, std::string_view what) {
        const ExecStatusType status = r != nullptr ? PQresultStatus(r) : PGRES_FATAL_ERROR;
        if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK) {
            throw db_error("postgresql: " + std::string(what) + ": " + error_text(conn_.get()));
        }
    }

    conn_ptr conn_;
    std::uint64_t generation_;
};

pg_store::pg_store(std::string conninfo)
    : conninfo_(std::move(conninfo)), generation_(next_generation++) {
    connection set_up(conninfo_, 0, true);  // closed again: the pool threads open their own
}

pg_store::connection& pg_store::here() {
    thread_local std::unique_ptr<connection> conn;
    if (!conn || conn->generation() != generation_ || !conn->usable()) {
        conn.reset();
        conn = std::make_unique<connection>(conninfo_, generation_);
    }
    return *conn;
}

std::vector<todo> pg_store::list(std::int64_t limit, std::int64_t offset) {
    const std::string l = std::to_string(limit);
    const std::string o = std::to_string(offset);
    return rows_of(here().run(list_sql, std::array{l.c_str(), o.c_str()}).get());
}

std::optional<todo> pg_store::get(std::int64_t id) {
    const std::string i = std::to_string(id);
    auto found = rows_of(here().run(get_sql, std::array{i.c_str()}).get());
    if (found.empty()) return std::nullopt;
    return std::move(found.front());
}

todo pg_store::add(const todo_fields& fields) {
    // The title goes as a text parameter: it has no NUL byte (the routes refuse U+0000,
    // which PostgreSQL's text cannot hold either).
    auto stored =
        rows_of(here()
                    .run(add_sql, std::array{fields.title.c_str(), fields.done ? "true" : "false"})
                    .get());
    if (stored.size() != 1) throw db_error("postgresql: insert returned no row");
    return std::move(stored.front());
}

std::optional<todo> pg_store::replace(std::int64_t id, const todo_fields& fields) {
    const std::string i = std::to_string(id);
    auto stored = rows_of(here()
                              .run(replace_sql, std::array{i.c_str(), fields.title.c_str(),
                                                           fields.done ? "true" : "false"})
                              .get());
    if (stored.empty()) return std::nullopt;
    return std::move(stored.front());
}

bool pg_store::remove(std::int64_t id) {
    const std::string i = std::to_string(id);
    return PQntuples(here().run(remove_sql, std::array{i.c_str()}).get()) > 0;
}

void pg_store::ping() {
    if (PQntuples(here().run(ping_sql, std::array<const char*, 0>{}).get()) != 1) {
        throw db_error("postgresql: ping returned no row");
    }
}

}  // namespace todo_app

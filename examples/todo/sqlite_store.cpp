#include "sqlite_store.hpp"

#include <sqlite3.h>

#include <atomic>
#include <memory>
#include <string_view>
#include <utility>

namespace todo_app {

namespace {

// How long a statement waits for another connection's write lock before it fails
// (SQLITE_BUSY, answered 503). WAL lets readers go on while one connection writes.
constexpr int busy_timeout_ms = 5000;

constexpr const char* schema_sql =
    "CREATE TABLE IF NOT EXISTS todos ("
    " id INTEGER PRIMARY KEY AUTOINCREMENT,"  // AUTOINCREMENT: a deleted id is never reused
    " title TEXT NOT NULL,"
    " done INTEGER NOT NULL CHECK (done IN (0, 1)))";

std::atomic<std::uint64_t> next_generation{1};

struct db_closer {
    // _v2: a statement still open keeps the handle alive until it is finalized.
    void operator()(sqlite3* db) const noexcept { sqlite3_close_v2(db); }
};
struct stmt_finalizer {
    void operator()(sqlite3_stmt* s) const noexcept { sqlite3_finalize(s); }
};
using db_ptr = std::unique_ptr<sqlite3, db_closer>;
using stmt_ptr = std::unique_ptr<sqlite3_stmt, stmt_finalizer>;

[[noreturn]] void fail(sqlite3* db, std::string_view what) {
    throw db_error("sqlite: " + std::string(what) + ": " + sqlite3_errmsg(db));
}

// Resets a statement and clears its parameters when a call is done with it, even on a throw.
class statement_use {
public:
    explicit statement_use(sqlite3_stmt* s) : s_(s) {}
    statement_use(const statement_use&) = delete;
    statement_use& operator=(const statement_use&) = delete;
    ~statement_use() {
        sqlite3_reset(s_);
        sqlite3_clear_bindings(s_);
    }
    sqlite3_stmt* get() const noexcept { return s_; }

private:
    sqlite3_stmt* s_;
};

todo row_of(sqlite3_stmt* s) {
    todo t;
    t.id = sqlite3_column_int64(s, 0);
    const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(s, 1));
    const int bytes = sqlite3_column_bytes(s, 1);  // after column_text, as SQLite advises
    if (text != nullptr) t.title.assign(text, static_cast<std::size_t>(bytes));
    t.done = sqlite3_column_int(s, 2) != 0;
    return t;
}

}  // namespace

class sqlite_store::connection {
public:
    // With `set_up`, first puts the file in WAL mode and creates the table when missing.
    explicit connection(const std::string& path, bool set_up = false) {
        sqlite3* raw = nullptr;
        // NOMUTEX: this connection is used only by the thread that opened it (and closed by
        // the store once that thread is done with it).
        const int rc = sqlite3_open_v2(
            path.c_str(), &raw, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
            nullptr);
        db_.reset(raw);
        if (rc != SQLITE_OK) {
            throw db_error("sqlite: cannot open " + path + ": " +
                           (raw != nullptr ? sqlite3_errmsg(raw) : sqlite3_errstr(rc)));
        }
        sqlite3_extended_result_codes(raw, 1);
        sqlite3_busy_timeout(raw, busy_timeout_ms);
        if (set_up) {
            enable_wal();
            exec(schema_sql);
        }
        list_ = prepare("SELECT id, title, done FROM todos ORDER BY id DESC LIMIT ?1 OFFSET ?2");
        get_ = prepare("SELECT id, title, done FROM todos WHERE id = ?1");
        add_ = prepare("INSERT INTO todos (title, done) VALUES (?1, ?2) RETURNING id, title, done");
        replace_ = prepare(
            "UPDATE todos SET title = ?2, done = ?3 WHERE id = ?1 RETURNING id, title, done");
        remove_ = prepare("DELETE FROM todos WHERE id = ?1");
        // Reads the table itself (a bare SELECT 1 would not touch the file).
        ping_ = prepare("SELECT EXISTS (SELECT 1 FROM todos)");
    }

    sqlite3* db() const noexcept { return db_.get(); }

    // Runs a statement whose parameters are bound and collects its rows.
    std::vector<todo> rows(sqlite3_stmt* s, std::string_view what) {
        std::vector<todo> out;
        for (;;) {
            const int rc = sqlite3_step(s);
            if (rc == SQLITE_ROW) {
                out.push_back(row_of(s));
            } else if (rc == SQLITE_DONE) {
                return out;
            } else {
                fail(db(), what);
            }
        }
    }

    void bind_id(sqlite3_stmt* s, int index, std::int64_t id) {
        if (sqlite3_bind_int64(s, index, id) != SQLITE_OK) fail(db(), "bind");
    }
    void bind_fields(sqlite3_stmt* s, int first, const todo_fields& f) {
        // SQLITE_TRANSIENT: SQLite copies the text, so nothing depends on `f` living on.
        if (sqlite3_bind_text64(s, first, f.title.data(), f.title.size(), SQLITE_TRANSIENT,
                                SQLITE_UTF8) != SQLITE_OK ||
            sqlite3_bind_int(s, first + 1, f.done ? 1 : 0) != SQLITE_OK) {
            fail(db(), "bind");
        }
    }

private:
    // Constant SQL only (schema, pragmas): nothing here comes from a request.
    void exec(const char* sql) {
        char* error = nullptr;
        if (sqlite3_exec(db(), sql, nullptr, nullptr, &error) != SQLITE_OK) {
            std::string message = error != nullptr ? error : sqlite3_errmsg(db());
            sqlite3_free(error);
            throw db_error("sqlite: " + std::string(sql) + ": " + message);
        }
    }

    // journal_mode=WAL is stored in the file: every later connection is in WAL mode too.
    // The pragma answers the mode it got, which stays "delete" where WAL cannot work.
    void enable_wal() {
        const stmt_ptr mode = prepare("PRAGMA journal_mode = WAL");
        if (sqlite3_step(mode.get()) != SQLITE_ROW) fail(db(), "PRAGMA journal_mode = WAL");
        const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(mode.get(), 0));
        if (text == nullptr || std::string_view(text) != "wal") {
            throw db_error(std::string("sqlite: the file cannot be put in WAL mode (journal_mode "
                                       "is ") +
                           (text != nullptr ? text : "unknown") + ")");
        }
    }

    stmt_ptr prepare(const char* sql) {
        sqlite3_stmt* s = nullptr;
        if (sqlite3_prepare_v3(db(), sql, -1, SQLITE_PREPARE_PERSISTENT, &s, nullptr) !=
            SQLITE_OK) {
            fail(db(), std::string("prepare ") + sql);
        }
        return stmt_ptr(s);
    }

    // db_ is declared before the statements, so they are finalized before it is closed.
    db_ptr db_;

public:
    stmt_ptr list_, get_, add_, replace_, remove_, ping_;
};

sqlite_store::sqlite_store(std::string path)
    : path_(std::move(path)), generation_(next_generation++) {
    connection set_up(path_, true);  // closed again: the pool threads open their own
}

sqlite_store::~sqlite_store() {
    // One at a time, on this thread: each close sees whether it is the last.
    std::lock_guard lock(connections_mutex_);
    while (!connections_.empty()) connections_.pop_back();
}

sqlite_store::connection& sqlite_store::here() {
    // This thread's connection to the store it last served: a pointer only, owned by that
    // store, used only while its generation is this store's (that store may be gone, so
    // the generation is kept beside the pointer, never read through it).
    thread_local connection* conn = nullptr;
    thread_local std::uint64_t conn_generation = 0;
    if (conn == nullptr || conn_generation != generation_) {
        auto made = std::make_unique<connection>(path_);
        conn = made.get();
        conn_generation = generation_;
        std::lock_guard lock(connections_mutex_);
        connections_.push_back(std::move(made));
    }
    return *conn;
}

std::vector<todo> sqlite_store::list(std::int64_t limit, std::int64_t offset) {
    connection& c = here();
    const statement_use use(c.list_.get());
    c.bind_id(use.get(), 1, limit);
    c.bind_id(use.get(), 2, offset);
    return c.rows(use.get(), "list");
}

std::optional<todo> sqlite_store::get(std::int64_t id) {
    connection& c = here();
    const statement_use use(c.get_.get());
    c.bind_id(use.get(), 1, id);
    auto found = c.rows(use.get(), "get");
    if (found.empty()) return std::nullopt;
    return std::move(found.front());
}

todo sqlite_store::add(const todo_fields& fields) {
    connection& c = here();
    const statement_use use(c.add_.get());
    c.bind_fields(use.get(), 1, fields);
    auto stored = c.rows(use.get(), "insert");
    if (stored.size() != 1) throw db_error("sqlite: insert returned no row");
    return std::move(stored.front());
}

std::optional<todo> sqlite_store::replace(std::int64_t id, const todo_fields& fields) {
    connection& c = here();
    const statement_use use(c.replace_.get());
    c.bind_id(use.get(), 1, id);
    c.bind_fields(use.get(), 2, fields);
    auto stored = c.rows(use.get(), "update");
    if (stored.empty()) return std::nullopt;
    return std::move(stored.front());
}

bool sqlite_store::remove(std::int64_t id) {
    connection& c = here();
    const statement_use use(c.remove_.get());
    c.bind_id(use.get(), 1, id);
    c.rows(use.get(), "delete");
    return sqlite3_changes64(c.db()) > 0;
}

void sqlite_store::ping() {
    connection& c = here();
    const statement_use use(c.ping_.get());
    if (sqlite3_step(use.get()) != SQLITE_ROW) fail(c.db(), "ping");
}

}  // namespace todo_app

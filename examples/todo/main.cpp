// A to-do list kept in a real database: SQLite by default, PostgreSQL with --pg. Handlers
// are coroutines that read and check the request on the event loop. SQLite calls run on
// tern's blocking pool (co_await tern::on_blocking_pool), where every pool thread holds its
// own connection; PostgreSQL runs on the loop itself, through libpq's non-blocking API and
// tern::wait_readable / wait_writable, on a few connections per loop (pg_async.hpp). Either
// way a slow query never stalls an event loop.
//
//   todo [port] [--db FILE | --pg CONNINFO]
//
//   port          default 8080
//   --db FILE     the SQLite file (default todo.db in the working directory)
//   --pg CONNINFO a PostgreSQL connection string, e.g. "host=127.0.0.1 dbname=todo"
//
//   curl -d '{"title":"write docs","done":false}' localhost:8080/todos
//   curl 'localhost:8080/todos?limit=10&offset=0'
//   curl localhost:8080/openapi.json      (and Swagger UI at http://localhost:8080/docs)

#include "pg_async.hpp"
#include "sqlite_store.hpp"
#include "store.hpp"

#include <tern/json.hpp>
#include <tern/openapi.hpp>
#include <tern/tern.hpp>

#include <charconv>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <limits>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace todo_app {

namespace {

// Answers keep their members in the order written here (ordered_json), as the API shows them:
// {"id": ..., "title": ..., "done": ...}, {"status": ..., "db": ...}, {"error": ..., "field": ...}.
using ordered = nlohmann::ordered_json;

ordered as_json(const todo& t) { return {{"id", t.id}, {"title", t.title}, {"done", t.done}}; }

ordered as_json(const std::vector<todo>& page) {
    ordered out = ordered::array();
    for (const todo& t : page) out.push_back(as_json(t));
    return out;
}

constexpr std::int64_t default_limit = 20;
constexpr std::int64_t max_limit = 100;
constexpr std::size_t max_title_code_points = 200;
// A title is at most 200 code points, up to 2,400 bytes of JSON escapes: 16 KiB leaves room
// for any valid body and answers 413 to anything much bigger.
constexpr std::size_t max_body_bytes = 16 * 1024;
// SQLite: at most this many database calls run at once, so at most this many connections
// are open.
constexpr unsigned pool_threads = 8;
// PostgreSQL: connections per event loop, requests of a loop that may wait for one, and how
// long a statement may take.
constexpr std::size_t pg_connections_per_loop = 4;
constexpr std::size_t pg_max_waiting_per_loop = 4096;
constexpr std::chrono::milliseconds pg_timeout{5000};

// A request value that is missing or wrong; answered 400 with the field's name.
struct invalid_field : std::runtime_error {
    invalid_field(std::string name, const std::string& message)
        : std::runtime_error(message), field(std::move(name)) {}
    std::string field;
};

// An id the table does not hold; answered 404.
struct no_such_todo : std::runtime_error {
    explicit no_such_todo(std::int64_t id)
        : std::runtime_error("no to-do with id " + std::to_string(id)) {}
};

bool parse_int(std::string_view text, std::int64_t& out) {
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
    return ec == std::errc{} && end == text.data() + text.size();
}

// Query parameter `name` as an integer in [low, high], `fallback` when absent.
std::int64_t query_int(const tern::context& ctx, const char* name, std::int64_t fallback,
                       std::int64_t low, std::int64_t high) {
    const auto text = ctx.query_param(name);
    if (!text) return fallback;
    std::int64_t value = 0;
    if (!parse_int(*text, value) || value < low || value > high) {
        throw invalid_field(name, std::string("query parameter '") + name +
                                      "' must be an integer from " + std::to_string(low) + " to " +
                                      std::to_string(high));
    }
    return value;
}

std::int64_t id_of(const tern::context& ctx) {
    std::int64_t id = 0;
    if (!parse_int(ctx.path_param("id"), id)) {
        throw invalid_field("id", "path parameter 'id' must be an integer");
    }
    return id;
}

// body_as has checked the text is valid UTF-8 (nlohmann_json refuses anything else), so the
// code points are the bytes that do not continue a sequence.
std::size_t code_points(std::string_view s) {
    std::size_t n = 0;
    for (const char c : s) {
        if ((static_cast<unsigned char>(c) & 0xC0U) != 0x80U) ++n;
    }
    return n;
}

// The body of POST and PUT: {"title": string of 1..200 code points, "done": bool (default
// false)}. Other members are ignored.
todo_fields fields_of(const tern::context& ctx) {
    tern::json body;
    try {
        body = ctx.body_as<tern::json>();
    } catch (const tern::http_error& e) {
        // Not JSON (or not UTF-8): tern's 400 and its message, in this API's shape. A 413
        // (past max_json_size) stays tern's own.
        if (e.status() != 400) throw;
        throw invalid_field("body", e.what());
    }
    if (!body.is_object()) {
        throw invalid_field("body",
                            "the body must be a JSON object like "
                            "{\"title\": \"...\", \"done\": false}");
    }
    todo_fields fields;
    const auto title = body.find("title");
    if (title == body.end()) throw invalid_field("title", "missing field 'title'");
    if (!title->is_string()) throw invalid_field("title", "field 'title' must be a string");
    fields.title = title->get<std::string>();
    const std::size_t length = code_points(fields.title);
    if (length == 0) throw invalid_field("title", "field 'title' must not be empty");
    if (length > max_title_code_points) {
        throw invalid_field(
            "title", "field 'title' must be at most " + std::to_string(max_title_code_points) +
                         " characters (Unicode code points), not " + std::to_string(length));
    }
    // PostgreSQL's text cannot hold U+0000; refused for both databases alike.
    if (fields.title.find('\0') != std::string::npos) {
        throw invalid_field("title", "field 'title' must not contain U+0000");
    }
    const auto done = body.find("done");
    if (done != body.end()) {
        if (!done->is_boolean()) throw invalid_field("done", "field 'done' must be true or false");
        fields.done = done->get<bool>();
    }
    return fields;
}

// The handlers. Each is a coroutine taking the store by reference (the store outlives the
// app), never a capturing lambda coroutine, whose captures would die with the lambda object.

tern::task list_todos(tern::context& ctx, todo_store& store) {
    const std::int64_t limit = query_int(ctx, "limit", default_limit, 1, max_limit);
    const std::int64_t offset =
        query_int(ctx, "offset", 0, 0, std::numeric_limits<std::int64_t>::max());
    const auto page = co_await tern::on_blocking_pool([&] { return store.list(limit, offset); });
    ctx.json(as_json(page));
}

tern::task create_todo(tern::context& ctx, todo_store& store) {
    const todo_fields fields = fields_of(ctx);
    const todo created = co_await tern::on_blocking_pool([&] { return store.add(fields); });
    ctx.status(201)
        .header("Location", "/todos/" + std::to_string(created.id))
        .json(as_json(created));
}

tern::task get_todo(tern::context& ctx, todo_store& store) {
    const std::int64_t id = id_of(ctx);
    const auto found = co_await tern::on_blocking_pool([&] { return store.get(id); });
    if (!found) throw no_such_todo(id);
    ctx.json(as_json(*found));
}

tern::task replace_todo(tern::context& ctx, todo_store& store) {
    const std::int64_t id = id_of(ctx);
    const todo_fields fields = fields_of(ctx);
    const auto stored = co_await tern::on_blocking_pool([&] { return store.replace(id, fields); });
    if (!stored) throw no_such_todo(id);
    ctx.json(as_json(*stored));
}

tern::task delete_todo(tern::context& ctx, todo_store& store) {
    const std::int64_t id = id_of(ctx);
    const bool removed = co_await tern::on_blocking_pool([&] { return store.remove(id); });
    if (!removed) throw no_such_todo(id);
    ctx.status(204);
}

tern::task health(tern::context& ctx, todo_store& store) {
    bool answered = true;
    try {
        co_await tern::on_blocking_pool([&] { store.ping(); });
    } catch (const db_error& e) {
        std::fprintf(stderr, "todo: /health: %s\n", e.what());
        answered = false;
    }
    ctx.status(answered ? 200 : 503)
        .json(ordered{{"status", answered ? "ok" : "unavailable"}, {"db", store.name()}});
}

// The API as its OpenAPI document describes it (/openapi.json, Swagger UI at /docs;
// docs/openapi.md), the same for SQLite and PostgreSQL.
namespace described {

tern::json ref(const char* schema) {
    return {{"$ref", std::string("#/components/schemas/") + schema}};
}

tern::openapi_info info() {
    const tern::json title{{"type", "string"},
                           {"minLength", 1},
                           {"maxLength", max_title_code_points},
                           {"description", "1 to 200 Unicode code points, no U+0000"}};
    tern::openapi_info i;
    i.title = "todo: a to-do list in SQLite or PostgreSQL";
    i.version = "1.0.0";
    i.extra = {{"components",
                {{"schemas",
                  {{"Todo",
                    {{"type", "object"},
                     {"required", {"id", "title", "done"}},
                     {"properties",
                      {{"id", tern::schema_of<std::int64_t>()},
                       {"title", title},
                       {"done", tern::schema_of<bool>()}}}}},
                   {"TodoFields",
                    {{"type", "object"},
                     {"required", {"title"}},
                     {"properties",
                      {{"title", title}, {"done", {{"type", "boolean"}, {"default", false}}}}}}},
                   {"Error",
                    {{"type", "object"},
                     {"required", {"error"}},
                     {"properties",
                      {{"error", {{"type", "string"}}},
                       {"field",
                        {{"type", "string"},
                         {"description",
                          "The field at fault: a body member, a parameter, or body"}}}}}}}}}}}};
    return i;
}

// What every route that reaches the database may also answer.
tern::api_doc route(std::string summary) {
    return tern::api_doc()
        .summary(std::move(summary))
        .tag("todos")
        .response(503, "The database did not answer (Retry-After: 1)", ref("Error"));
}

tern::api_doc by_id(std::string summary) {
    return route(std::move(summary))
        .path_param<std::int64_t>("id", "The to-do's id")
        .response(404, "No such to-do", ref("Error"));
}

tern::api_doc with_body(tern::api_doc doc) {
    return doc.request_body(ref("TodoFields"))
        .response(400, "A field or parameter is missing or wrong", ref("Error"))
        .error_response(413, "A body over 16 KiB");
}

tern::api_doc list() {
    return route("List to-dos, newest first")
        .query_param<std::int64_t>("limit", "At most this many, 1 to 100 (default 20)")
        .query_param<std::int64_t>("offset", "Skip this many (default 0)")
        .response(200, "The page", {{"type", "array"}, {"items", ref("Todo")}})
        .response(400, "A limit or offset out of range", ref("Error"));
}

tern::api_doc create() {
    return with_body(route("Add a to-do")).response(201, "Added (Location names it)", ref("Todo"));
}

tern::api_doc get() {
    return by_id("One to-do")
        .response(200, "The to-do", ref("Todo"))
        .response(400, "An id that is not an integer", ref("Error"));
}

tern::api_doc replace() {
    return with_body(by_id("Replace a to-do")).response(200, "Replaced", ref("Todo"));
}

tern::api_doc remove() {
    return by_id("Remove a to-do")
        .response(204, "Removed")
        .response(400, "An id that is not an integer", ref("Error"));
}

tern::api_doc health() {
    const tern::json status{{"type", "object"},
                            {"properties",
                             {{"status", {{"type", "string"}, {"enum", {"ok", "unavailable"}}}},
                              {"db", {{"type", "string"}}}}}};
    return tern::api_doc()
        .summary("Whether the database answers")
        .tag("operations")
        .response(200, "It does", status)
        .response(503, "It does not", status);
}

}  // namespace described

// The same API on PostgreSQL, each route one statement run on the loop (pg_async::run).

constexpr const char* list_sql =
    "SELECT id, title, done FROM todos ORDER BY id DESC LIMIT $1::bigint OFFSET $2::bigint";
constexpr const char* get_sql = "SELECT id, title, done FROM todos WHERE id = $1::bigint";
constexpr const char* add_sql =
    "INSERT INTO todos (title, done) VALUES ($1::text, $2::boolean) RETURNING id, title, done";
constexpr const char* replace_sql =
    "UPDATE todos SET title = $2::text, done = $3::boolean WHERE id = $1::bigint "
    "RETURNING id, title, done";
constexpr const char* remove_sql = "DELETE FROM todos WHERE id = $1::bigint RETURNING id";
constexpr const char* ping_sql = "SELECT EXISTS (SELECT 1 FROM todos)";

const char* as_sql_bool(bool b) { return b ? "true" : "false"; }

void pg_routes(tern::app& app, pg_async& pg) {
    app.get("/todos", tern::documented(described::list(), [&pg](tern::context& ctx) {
                const std::int64_t limit = query_int(ctx, "limit", default_limit, 1, max_limit);
                const std::int64_t offset =
                    query_int(ctx, "offset", 0, 0, std::numeric_limits<std::int64_t>::max());
                return pg.run(
                    ctx, {list_sql, {std::to_string(limit), std::to_string(offset)}},
                    [](tern::context& c, const PGresult* r) { c.json(as_json(todos_of(r))); });
            }));
    app.post("/todos", tern::documented(described::create(), [&pg](tern::context& ctx) {
                 // The title goes as a text parameter: it has no NUL byte (fields_of refuses
                 // U+0000, which PostgreSQL's text cannot hold either).
                 const todo_fields fields = fields_of(ctx);
                 return pg.run(ctx, {add_sql, {fields.title, as_sql_bool(fields.done)}},
                               [](tern::context& c, const PGresult* r) {
                                   const auto stored = todos_of(r);
                                   if (stored.size() != 1)
                                       throw db_error("postgresql: insert returned no row");
                                   c.status(201)
                                       .header("Location",
                                               "/todos/" + std::to_string(stored.front().id))
                                       .json(as_json(stored.front()));
                               });
             }));
    app.get("/todos/{id}", tern::documented(described::get(), [&pg](tern::context& ctx) {
                const std::int64_t id = id_of(ctx);
                return pg.run(ctx, {get_sql, {std::to_string(id)}},
                              [id](tern::context& c, const PGresult* r) {
                                  const auto found = todos_of(r);
                                  if (found.empty()) throw no_such_todo(id);
                                  c.json(as_json(found.front()));
                              });
            }));
    app.put("/todos/{id}", tern::documented(described::replace(), [&pg](tern::context& ctx) {
                const std::int64_t id = id_of(ctx);
                const todo_fields fields = fields_of(ctx);
                return pg.run(
                    ctx,
                    {replace_sql, {std::to_string(id), fields.title, as_sql_bool(fields.done)}},
                    [id](tern::context& c, const PGresult* r) {
                        const auto stored = todos_of(r);
                        if (stored.empty()) throw no_such_todo(id);
                        c.json(as_json(stored.front()));
                    });
            }));
    app.del("/todos/{id}", tern::documented(described::remove(), [&pg](tern::context& ctx) {
                const std::int64_t id = id_of(ctx);
                return pg.run(ctx, {remove_sql, {std::to_string(id)}},
                              [id](tern::context& c, const PGresult* r) {
                                  if (PQntuples(r) == 0) throw no_such_todo(id);
                                  c.status(204);
                              });
            }));
    app.get(
        "/health", tern::documented(described::health(), [&pg](tern::context& ctx) {
            return pg.run(
                ctx, {ping_sql, {}},
                [](tern::context& c, const PGresult* /*r*/) {
                    c.status(200).json(ordered{{"status", "ok"}, {"db", "postgresql"}});
                },
                [](tern::context& c, const std::exception& e) {
                    std::fprintf(stderr, "todo: /health: %s\n", e.what());
                    c.status(503).json(ordered{{"status", "unavailable"}, {"db", "postgresql"}});
                });
        }));
}

struct settings {
    std::uint16_t port = 8080;
    std::string db_file = "todo.db";
    std::optional<std::string> pg_conninfo;
};

int run(int argc, char** argv) {
    settings s;
    bool have_db = false;
    for (int i = 1; i < argc; ++i) {
        const std::string_view arg = argv[i];
        bool ok = true;
        if (arg == "--db" && i + 1 < argc && !s.pg_conninfo) {
            s.db_file = argv[++i];
            have_db = true;
            ok = !s.db_file.empty();
        } else if (arg == "--pg" && i + 1 < argc && !have_db) {
            s.pg_conninfo = argv[++i];
        } else {
            const auto [end, ec] = std::from_chars(arg.data(), arg.data() + arg.size(), s.port);
            ok = ec == std::errc{} && end == arg.data() + arg.size();
        }
        if (!ok) {
            std::fprintf(stderr, "usage: todo [port] [--db FILE | --pg CONNINFO]\n");
            return 2;
        }
    }

    // Opening the database creates the table when missing; failing here ends the program.
    std::unique_ptr<todo_store> store;
    std::unique_ptr<pg_async> pg;
    if (s.pg_conninfo) {
        pg = std::make_unique<pg_async>(*s.pg_conninfo, pg_connections_per_loop,
                                        pg_max_waiting_per_loop, pg_timeout);
    } else {
        store = std::make_unique<sqlite_store>(s.db_file);
    }

    tern::app app;
    app.max_body_size(max_body_bytes).configure([&](tern::config& c) {
        c.blocking.threads = pool_threads;
    });

    if (pg) {
        pg_routes(app, *pg);
    } else {
        todo_store& db = *store;
        using tern::documented;
        app.get("/todos", documented(described::list(),
                                     [&db](tern::context& ctx) { return list_todos(ctx, db); }));
        app.post("/todos", documented(described::create(),
                                      [&db](tern::context& ctx) { return create_todo(ctx, db); }));
        app.get("/todos/{id}", documented(described::get(),
                                          [&db](tern::context& ctx) { return get_todo(ctx, db); }));
        app.put("/todos/{id}", documented(described::replace(), [&db](tern::context& ctx) {
                    return replace_todo(ctx, db);
                }));
        app.del("/todos/{id}", documented(described::remove(), [&db](tern::context& ctx) {
                    return delete_todo(ctx, db);
                }));
        app.get("/health", documented(described::health(),
                                      [&db](tern::context& ctx) { return health(ctx, db); }));
    }
    app.openapi("/openapi.json", described::info());
    try {
        app.swagger_ui("/docs", "/openapi.json");
    } catch (const std::runtime_error& e) {  // built without npm's swagger-ui-dist
        std::fprintf(stderr, "todo: no Swagger UI at /docs: %s\n", e.what());
    }

    app.exception<invalid_field>([](invalid_field& e, tern::context& ctx) {
        // The message may quote the bytes of a body that is not UTF-8 (from body_as): those
        // are replaced with U+FFFD, where a plain dump would throw (a 500).
        const ordered answer{{"error", e.what()}, {"field", e.field}};
        ctx.status(400).json_text(answer.dump(-1, ' ', false, ordered::error_handler_t::replace));
    });
    app.exception<no_such_todo>([](no_such_todo& e, tern::context& ctx) {
        ctx.status(404).json({{"error", e.what()}});
    });
    // What the database said goes to the log; the client only learns it did not answer.
    app.exception<db_error>([](db_error& e, tern::context& ctx) {
        std::fprintf(stderr, "todo: %s %s: %s\n", std::string(ctx.method()).c_str(),
                     std::string(ctx.path()).c_str(), e.what());
        ctx.status(503).header("Retry-After", "1").json({{"error", "the database did not answer"}});
    });

    std::printf("todo: listening on http://0.0.0.0:%u/ with %s (%s; Ctrl-C stops)\n", s.port,
                pg ? "postgresql" : std::string(store->name()).c_str(),
                s.pg_conninfo ? "--pg" : s.db_file.c_str());
    std::fflush(stdout);
    app.listen(s.port);
    return 0;
}

}  // namespace

}  // namespace todo_app

int main(int argc, char** argv) {
    try {
        return todo_app::run(argc, argv);
    } catch (const std::exception& e) {  // the database cannot be opened, a port in use
        std::fprintf(stderr, "todo: %s\n", e.what());
        return 1;
    }
}

// A small JSON REST API for a to-do list: route groups, an auth filter, JSON in and out,
// typed parameters, exception mapping, error handlers, cookies, a form login, uploads,
// redirects, CORS, compression and an access log. The docs quote it (docs/json.md,
// docs/errors.md, docs/forms.md, docs/cors.md, docs/compression.md, docs/logging.md).
//
//   rest_api [port]      (default 8080)
//
//   curl -i -c jar -d 'user=demo&password=demo' localhost:8080/login
//   curl -b jar -d '{"title":"write docs"}' localhost:8080/api/todos
//   curl -b jar 'localhost:8080/api/todos?limit=10'

#include <tern/json.hpp>
#include <tern/tern.hpp>

#include <charconv>
#include <cstdio>
#include <map>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace {

struct todo {
    int id = 0;
    std::string title;
    bool done = false;
};

void to_json(tern::json& j, const todo& t) {
    j = {{"id", t.id}, {"title", t.title}, {"done", t.done}};
}

// What a client sends to create or replace a to-do.
struct todo_input {
    std::string title;
    bool done = false;
};

void from_json(const tern::json& j, todo_input& in) {
    j.at("title").get_to(in.title);  // missing or not a string: 400 from body_as
    in.done = j.value("done", false);
}

// Thrown by the store for an id it does not hold; mapped to a 404 below.
struct no_such_todo : std::runtime_error {
    explicit no_such_todo(int id) : std::runtime_error("no to-do with id " + std::to_string(id)) {}
};

// Handlers run on several event-loop threads at once: the store locks.
class todo_store {
public:
    std::vector<todo> list(std::size_t offset, std::size_t limit) const {
        std::lock_guard lock(mutex_);
        std::vector<todo> page;
        for (auto it = todos_.begin(); it != todos_.end() && page.size() < limit; ++it) {
            if (offset > 0) {
                --offset;
                continue;
            }
            page.push_back(it->second);
        }
        return page;
    }
    todo get(int id) const {
        std::lock_guard lock(mutex_);
        const auto it = todos_.find(id);
        if (it == todos_.end()) throw no_such_todo(id);
        return it->second;
    }
    todo add(const todo_input& in) {
        std::lock_guard lock(mutex_);
        const todo t{next_id_++, in.title, in.done};
        todos_[t.id] = t;
        return t;
    }
    todo replace(int id, const todo_input& in) {
        std::lock_guard lock(mutex_);
        const auto it = todos_.find(id);
        if (it == todos_.end()) throw no_such_todo(id);
        it->second.title = in.title;
        it->second.done = in.done;
        return it->second;
    }
    void remove(int id) {
        std::lock_guard lock(mutex_);
        if (todos_.erase(id) == 0) throw no_such_todo(id);
    }

private:
    mutable std::mutex mutex_;
    std::map<int, todo> todos_;
    int next_id_ = 1;
};

// A demo credential and session token. A real application checks a password hash and
// issues random session ids; this example only shows where tern fits in.
constexpr std::string_view demo_session = "demo-session-token";

todo_input validated(todo_input in) {
    if (in.title.empty()) throw tern::unprocessable_content("title must not be empty");
    return in;
}

}  // namespace

int main(int argc, char** argv) {
    std::uint16_t port = 8080;
    if (argc > 1) {
        const std::string_view arg = argv[1];
        const auto [end, ec] = std::from_chars(arg.data(), arg.data() + arg.size(), port);
        if (ec != std::errc{} || end != arg.data() + arg.size()) {
            std::fprintf(stderr, "usage: rest_api [port]\n");
            return 2;
        }
    }

    todo_store store;
    tern::app app;
    app.max_body_size(2 * 1024 * 1024).max_upload_file_size(1024 * 1024);

    // A browser app served from another origin may call this API with its cookies.
    tern::cors_config cors;
    cors.allowed_origins = {"http://localhost:3000"};
    cors.allow_credentials = true;
    app.cors(cors);
    app.compression();                       // zstd, br or gzip for responses of 1 KiB and more
    app.request_logger(tern::access_log());  // one line per request on stderr

    app.get("/", [](tern::context& ctx) { ctx.redirect("/api/todos"); });

    // A form login that sets the session cookie.
    app.post("/login", [](tern::context& ctx) {
        if (ctx.form_param("user") != "demo" || ctx.form_param("password") != "demo") {
            throw tern::unauthorized("wrong user or password");
        }
        tern::cookie_options session;
        session.http_only = true;
        session.same_site = tern::same_site::lax;
        session.max_age = std::chrono::hours(8);
        ctx.cookie("session", std::string(demo_session), session).json({{"user", "demo"}});
    });
    app.post("/logout", [](tern::context& ctx) { ctx.remove_cookie("session").status(204); });

    app.group("/api", [&store](tern::group& api) {
        // Every /api request needs the session cookie or the token as a bearer credential.
        api.before([](tern::context& ctx) {
            const auto auth = ctx.header("authorization");
            const bool bearer = auth && *auth == "Bearer " + std::string(demo_session);
            if (ctx.cookie("session") != demo_session && !bearer) {
                throw tern::unauthorized("log in first: POST /login");
            }
        });

        api.get("/todos", [&store](tern::context& ctx) {
            const auto limit = ctx.query_param<std::size_t>("limit", 20);
            const auto offset = ctx.query_param<std::size_t>("offset", 0);
            if (limit > 100) throw tern::bad_request("limit is at most 100");
            ctx.json(store.list(offset, limit));
        });
        api.post("/todos", [&store](tern::context& ctx) {
            const todo created = store.add(validated(ctx.body_as<todo_input>()));
            ctx.status(201)
                .header("Location", "/api/todos/" + std::to_string(created.id))
                .json(created);
        });
        api.get("/todos/{id}",
                [&store](tern::context& ctx) { ctx.json(store.get(ctx.path_param<int>("id"))); });
        api.put("/todos/{id}", [&store](tern::context& ctx) {
            ctx.json(
                store.replace(ctx.path_param<int>("id"), validated(ctx.body_as<todo_input>())));
        });
        api.del("/todos/{id}", [&store](tern::context& ctx) {
            store.remove(ctx.path_param<int>("id"));
            ctx.status(204);
        });
        // multipart/form-data with a "file" field; the bytes stay in memory (bounded by
        // max_upload_file_size), and the name the client sent is never used as a path.
        api.post("/todos/{id}/attachments", [&store](tern::context& ctx) {
            const todo t = store.get(ctx.path_param<int>("id"));
            const auto file = ctx.uploaded_file("file");
            if (!file) throw tern::bad_request("send the file in a form field named 'file'");
            ctx.status(201).json({{"todo", t.id},
                                  {"filename", file->filename},
                                  {"content_type", file->content_type},
                                  {"size", file->size()}});
        });
    });

    // Every response says it is not to be sniffed as another type.
    app.after([](tern::context& ctx) { ctx.header("X-Content-Type-Options", "nosniff"); });

    // The store's exception becomes a JSON 404.
    app.exception<no_such_todo>([](no_such_todo& e, tern::context& ctx) {
        ctx.status(404).json({{"error", e.what()}});
    });
    // tern's own 404 (no route) in the same shape.
    app.error(404, [](tern::context& ctx) {
        ctx.json({{"error", "no route for " + std::string(ctx.path())}});
    });

    std::printf("rest_api: listening on http://0.0.0.0:%u/ (Ctrl-C stops)\n", port);
    std::fflush(stdout);
    app.listen(port);
    return 0;
}

#include "todo_api.hpp"

#include <chrono>
#include <string_view>

namespace rest_api {

void to_json(tern::json& j, const todo& t) {
    j = {{"id", t.id}, {"title", t.title}, {"done", t.done}};
}

void from_json(const tern::json& j, todo_input& in) {
    j.at("title").get_to(in.title);  // missing or not a string: 400 from body_as
    in.done = j.value("done", false);
}

namespace {

// A demo credential and session token. A real application checks a password hash and
// issues random session ids; this example only shows where tern fits in.
constexpr std::string_view demo_session = "demo-session-token";

todo_input validated(todo_input in) {
    if (in.title.empty()) throw tern::unprocessable_content("title must not be empty");
    return in;
}

}  // namespace

void add_routes(tern::app& app, todo_store& store) {
    app.max_body_size(2 * 1024 * 1024).max_upload_file_size(1024 * 1024);

    // A browser app served from another origin may call this API with its cookies.
    tern::cors_config cors;
    cors.allowed_origins = {"http://localhost:3000"};
    cors.allow_credentials = true;
    app.cors(cors);
    app.compression();  // zstd, br or gzip for responses of 1 KiB and more

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
}

}  // namespace rest_api

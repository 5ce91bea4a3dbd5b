#include "todo_api.hpp"

#include <tern/openapi.hpp>

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

// The API as its OpenAPI document describes it (/openapi.json; docs/openapi.md). The shapes
// are named once under components and referred to with $ref.
tern::json ref(const char* schema) {
    return {{"$ref", std::string("#/components/schemas/") + schema}};
}

tern::openapi_info api_info() {
    tern::openapi_info info;
    info.title = "rest_api: a to-do list";
    info.version = "1.0.0";
    info.description = "Log in with `POST /login` (user and password `demo`), then call /api.";
    info.extra = {
        {"components",
         {{"schemas",
           {{"Todo",
             {{"type", "object"},
              {"required", {"id", "title", "done"}},
              {"properties",
               {{"id", tern::schema_of<int>()},
                {"title", {{"type", "string"}, {"minLength", 1}}},
                {"done", tern::schema_of<bool>()}}}}},
            {"TodoInput",
             {{"type", "object"},
              {"required", {"title"}},
              {"properties",
               {{"title", {{"type", "string"}, {"minLength", 1}}},
                {"done", {{"type", "boolean"}, {"default", false}}}}}}},
            {"Error",  // this API's own 404s; tern's errors are described by error_response
             {{"type", "object"},
              {"required", {"error"}},
              {"properties", {{"error", {{"type", "string"}}}}}}}}},
          {"securitySchemes",
           {{"session", {{"type", "apiKey"}, {"in", "cookie"}, {"name", "session"}}},
            {"bearer", {{"type", "http"}, {"scheme", "bearer"}}}}}}}};
    return info;
}

// What every /api route shares: a tag, the credentials, and the 401 of the before filter.
tern::api_doc api_route(std::string summary) {
    return tern::api_doc()
        .summary(std::move(summary))
        .tag("todos")
        .extend(
            {{"security", {{{"session", tern::json::array()}}, {{"bearer", tern::json::array()}}}}})
        .error_response(401, "Not logged in");
}

}  // namespace

void add_routes(tern::app& app, todo_store& store) {
    app.configure([](tern::config& c) {
        c.limits.max_body_size = 2 * 1024 * 1024;
        c.limits.max_upload_file_size = 1024 * 1024;
    });

    // A browser app served from another origin may call this API with its cookies.
    tern::cors_config cors;
    cors.allowed_origins = {"http://localhost:3000"};
    cors.allow_credentials = true;
    app.cors(cors);
    app.compression();  // zstd, br or gzip for responses of 1 KiB and more

    app.get("/", [](tern::context& ctx) { ctx.redirect("/api/todos"); });
    // The OpenAPI document of these routes; main.cpp adds Swagger UI at /docs.
    app.openapi("/openapi.json", api_info());

    // A form login that sets the session cookie.
    const auto login_doc =
        tern::api_doc()
            .summary("Log in: sets the session cookie")
            .request_body({{"type", "object"},
                           {"required", {"user", "password"}},
                           {"properties",
                            {{"user", {{"type", "string"}}}, {"password", {{"type", "string"}}}}}},
                          "application/x-www-form-urlencoded")
            .response(200, "Logged in",
                      {{"type", "object"}, {"properties", {{"user", {{"type", "string"}}}}}})
            .error_response(401, "Wrong user or password");
    app.post("/login", tern::documented(login_doc, [](tern::context& ctx) {
                 if (ctx.form_param("user") != "demo" || ctx.form_param("password") != "demo") {
                     throw tern::unauthorized("wrong user or password");
                 }
                 tern::cookie_options session;
                 session.http_only = true;
                 session.same_site = tern::same_site::lax;
                 session.max_age = std::chrono::hours(8);
                 ctx.cookie("session", std::string(demo_session), session).json({{"user", "demo"}});
             }));
    app.post("/logout", tern::documented(
                            tern::api_doc().summary("Log out").response(204, "Logged out"),
                            [](tern::context& ctx) { ctx.remove_cookie("session").status(204); }));

    app.group("/api", [&store](tern::group& api) {
        // Every /api request needs the session cookie or the token as a bearer credential.
        api.before([](tern::context& ctx) {
            const auto auth = ctx.header("authorization");
            const bool bearer = auth && *auth == "Bearer " + std::string(demo_session);
            if (ctx.cookie("session") != demo_session && !bearer) {
                throw tern::unauthorized("log in first: POST /login");
            }
        });

        const auto list_doc =
            api_route("List to-dos")
                .query_param<std::size_t>("limit", "At most this many (default 20, at most 100)")
                .query_param<std::size_t>("offset", "Skip this many (default 0)")
                .response(200, "The page", {{"type", "array"}, {"items", ref("Todo")}})
                .error_response(400, "A limit or offset that is not a number, or a limit over 100");
        api.get("/todos", tern::documented(list_doc, [&store](tern::context& ctx) {
                    const auto limit = ctx.query_param<std::size_t>("limit", 20);
                    const auto offset = ctx.query_param<std::size_t>("offset", 0);
                    if (limit > 100) throw tern::bad_request("limit is at most 100");
                    ctx.json(store.list(offset, limit));
                }));
        const auto create_doc = api_route("Add a to-do")
                                    .request_body(ref("TodoInput"))
                                    .response(201, "Added", ref("Todo"))
                                    .error_response(400, "Not JSON, or no title")
                                    .error_response(422, "An empty title");
        api.post("/todos", tern::documented(create_doc, [&store](tern::context& ctx) {
                     const todo created = store.add(validated(ctx.body_as<todo_input>()));
                     ctx.status(201)
                         .header("Location", "/api/todos/" + std::to_string(created.id))
                         .json(created);
                 }));
        const auto id_doc = [](std::string summary) {
            return api_route(std::move(summary))
                .path_param<int>("id", "The to-do's id")
                .error_response(400, "An id that is not an integer")
                .response(404, "No such to-do", ref("Error"));
        };
        api.get("/todos/{id}",
                tern::documented(id_doc("One to-do").response(200, "The to-do", ref("Todo")),
                                 [&store](tern::context& ctx) {
                                     ctx.json(store.get(ctx.path_param<int>("id")));
                                 }));
        const auto replace_doc = id_doc("Replace a to-do")
                                     .request_body(ref("TodoInput"))
                                     .response(200, "Replaced", ref("Todo"))
                                     .error_response(400,
                                                     "An id that is not an integer, or a "
                                                     "body that is not JSON or has no title")
                                     .error_response(422, "An empty title");
        api.put("/todos/{id}", tern::documented(replace_doc, [&store](tern::context& ctx) {
                    ctx.json(store.replace(ctx.path_param<int>("id"),
                                           validated(ctx.body_as<todo_input>())));
                }));
        api.del("/todos/{id}", tern::documented(id_doc("Remove a to-do").response(204, "Removed"),
                                                [&store](tern::context& ctx) {
                                                    store.remove(ctx.path_param<int>("id"));
                                                    ctx.status(204);
                                                }));
        // multipart/form-data with a "file" field; the bytes stay in memory (bounded by
        // max_upload_file_size), and the name the client sent is never used as a path.
        const auto attach_doc =
            id_doc("Attach a file")
                .request_body(
                    {{"type", "object"},
                     {"required", {"file"}},
                     {"properties",
                      {{"file",
                        {{"type", "string"}, {"contentMediaType", "application/octet-stream"}}}}}},
                    "multipart/form-data")
                .response(201, "What was received",
                          {{"type", "object"},
                           {"properties",
                            {{"todo", tern::schema_of<int>()},
                             {"filename", {{"type", "string"}}},
                             {"content_type", {{"type", "string"}}},
                             {"size", tern::schema_of<std::size_t>()}}}})
                .error_response(400, "An id that is not an integer, or no form field named 'file'");
        auto attach = [&store](tern::context& ctx) {
            const todo t = store.get(ctx.path_param<int>("id"));
            const auto file = ctx.uploaded_file("file");
            if (!file) throw tern::bad_request("send the file in a form field named 'file'");
            ctx.status(201).json({{"todo", t.id},
                                  {"filename", file->filename},
                                  {"content_type", file->content_type},
                                  {"size", file->size()}});
        };
        api.post("/todos/{id}/attachments", tern::documented(attach_doc, attach));
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

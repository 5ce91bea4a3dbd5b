// The server bench/hostile-bodies.py sends its worst-case bodies to: the request-body paths
// a client controls completely, with tern's default limits.
//   POST /json    -> the body parsed with body_as<tern::json> and sent back with ctx.json
//   POST /todo    -> body_as of a small struct (rest_api's POST /api/todos), 201
//   POST /upload  -> a multipart/form-data body split into files; their count and bytes
//   GET /         -> 200 "Hello, World!" (what bench/lib waits for)
//
//   bench_hostile_app [port] [threads]   (defaults: 8080, 1; listens on 127.0.0.1)

#include <tern/json.hpp>
#include <tern/tern.hpp>

#include <charconv>
#include <cstdio>
#include <string>
#include <string_view>

namespace {

template <class T>
bool parse_number(std::string_view arg, T& out) {
    const auto [end, ec] = std::from_chars(arg.data(), arg.data() + arg.size(), out);
    return ec == std::errc{} && end == arg.data() + arg.size();
}

struct todo_input {
    std::string title;
    bool done = false;
};

void from_json(const tern::json& j, todo_input& in) {
    j.at("title").get_to(in.title);
    in.done = j.value("done", false);
}

}  // namespace

int main(int argc, char** argv) {
    std::uint16_t port = 8080;
    unsigned threads = 1;
    if ((argc > 1 && !parse_number(argv[1], port)) ||
        (argc > 2 && !parse_number(argv[2], threads))) {
        std::fprintf(stderr, "usage: bench_hostile_app [port] [threads]\n");
        return 2;
    }

    tern::app app;
    app.threads(threads);
    app.get("/", [](tern::context& ctx) { ctx.text("Hello, World!"); });
    app.post("/json", [](tern::context& ctx) { ctx.json(ctx.body_as<tern::json>()); });
    app.post("/todo", [](tern::context& ctx) {
        const auto in = ctx.body_as<todo_input>();
        ctx.status(201).json({{"title", in.title}, {"done", in.done}});
    });
    app.post("/upload", [](tern::context& ctx) {
        std::size_t bytes = 0;
        const auto files = ctx.uploaded_files();
        for (const auto& f : files) bytes += f.size();
        ctx.text(std::to_string(files.size()) + " files, " + std::to_string(bytes) + " bytes");
    });

    std::printf("bench_hostile_app: listening on http://127.0.0.1:%u/ with %u thread(s)\n", port,
                threads);
    std::fflush(stdout);
    app.listen("127.0.0.1", port);
    return 0;
}

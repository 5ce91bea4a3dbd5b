#pragma once
/// @file openapi.hpp
/// OpenAPI 3.1 from the routes (docs/openapi.md): what a route may say about itself
/// (`tern::api_doc`, attached with `tern::documented`), and the document's own fields
/// (`tern::openapi_info`, for `app.openapi`). Includes nlohmann_json, as tern/json.hpp does.

#include <tern/app.hpp>
#include <tern/detail/convert.hpp>
#include <tern/json.hpp>

#include <limits>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>

namespace tern {

/// The JSON Schema of a parameter of type T, for the types the typed getters and the
/// validation chains convert to (docs/validation.md): `bool` is a boolean, integers are
/// integers (signed ones `int32`/`int64` by size; unsigned ones with `minimum: 0` and their
/// `maximum`, 32-bit ones as `int64`, since OpenAPI's formats are signed), floating point is
/// a number (`float`/`double`), `std::string` a string.
template <class T>
json schema_of() {
    static_assert(detail::is_convertible_param<T>,
                  "tern: schema_of<T> is for integers, floating point, bool or std::string");
    if constexpr (std::is_same_v<T, std::string>) {
        return json{{"type", "string"}};
    } else if constexpr (std::is_same_v<T, bool>) {
        return json{{"type", "boolean"}};
    } else if constexpr (std::is_floating_point_v<T>) {
        return json{{"type", "number"},
                    {"format", sizeof(T) == sizeof(float) ? "float" : "double"}};
    } else {
        json schema{{"type", "integer"}};
        if constexpr (std::is_signed_v<T>) {
            if constexpr (sizeof(T) == 4) schema["format"] = "int32";
            if constexpr (sizeof(T) == 8) schema["format"] = "int64";
        } else {
            // OpenAPI's formats are signed: a 32-bit unsigned value needs int64, a 64-bit one
            // fits no format, so its range is stated instead.
            if constexpr (sizeof(T) == 4) schema["format"] = "int64";
            schema["minimum"] = 0;
            schema["maximum"] = std::numeric_limits<T>::max();
        }
        return schema;
    }
}

/// What one route says about itself in the OpenAPI document: an OpenAPI 3.1 Operation
/// Object built with setters. Attach it with `tern::documented(doc, handler)`; a route
/// without one still appears, with its path parameters as strings.
///
///     app.get("/api/todos/{id}",
///             tern::documented(tern::api_doc()
///                                  .summary("One to-do")
///                                  .path_param<int>("id", "the to-do's id")
///                                  .response(200, "the to-do", todo_schema)
///                                  .response(404, "no such to-do"),
///                              get_todo));
class api_doc {
public:
    /// A short summary (the line Swagger UI shows beside the path).
    api_doc& summary(std::string text) {
        op_["summary"] = std::move(text);
        return *this;
    }
    /// A longer description (CommonMark).
    api_doc& description(std::string text) {
        op_["description"] = std::move(text);
        return *this;
    }
    /// The operation's id, unique in the document (client generators name methods by it).
    api_doc& operation_id(std::string id) {
        op_["operationId"] = std::move(id);
        return *this;
    }
    /// Adds a tag (Swagger UI groups operations by their first tag).
    api_doc& tag(std::string name) {
        op_["tags"].push_back(std::move(name));
        return *this;
    }
    /// Marks the operation deprecated.
    api_doc& deprecated(bool yes = true) {
        op_["deprecated"] = yes;
        return *this;
    }
    /// A path parameter `{name}` of type T (always required, as OpenAPI says).
    template <class T>
    api_doc& path_param(std::string name, std::string text = {}) {
        return add_param<T>("path", std::move(name), std::move(text), true);
    }
    /// A query parameter of type T (`ctx.query_param<T>`, `ctx.query_param_as<T>`).
    template <class T>
    api_doc& query_param(std::string name, std::string text = {}, bool required = false) {
        return add_param<T>("query", std::move(name), std::move(text), required);
    }
    /// A request header of type T.
    template <class T>
    api_doc& header_param(std::string name, std::string text = {}, bool required = false) {
        return add_param<T>("header", std::move(name), std::move(text), required);
    }
    /// A cookie of type T.
    template <class T>
    api_doc& cookie_param(std::string name, std::string text = {}, bool required = false) {
        return add_param<T>("cookie", std::move(name), std::move(text), required);
    }
    /// A Parameter Object written out in full (a schema of its own, examples, ...).
    api_doc& parameter(json object) {
        op_["parameters"].push_back(std::move(object));
        return *this;
    }
    /// The request body: its JSON Schema under `content_type`. Call again for another type.
    api_doc& request_body(json schema, const std::string& content_type = "application/json",
                          bool required = true) {
        auto& body = op_["requestBody"];
        body["content"][content_type]["schema"] = std::move(schema);
        body["required"] = required;
        return *this;
    }
    /// A response without a body (204, 404, ...): its status and what it means.
    api_doc& response(int status, std::string text) {
        op_["responses"][std::to_string(status)]["description"] = std::move(text);
        return *this;
    }
    /// A response with a body: its status, what it means, and the body's JSON Schema under
    /// `content_type`.
    api_doc& response(int status, std::string text, json schema,
                      const std::string& content_type = "application/json") {
        auto& r = op_["responses"][std::to_string(status)];
        r["description"] = std::move(text);
        r["content"][content_type]["schema"] = std::move(schema);
        return *this;
    }
    /// A response tern's own error handling writes (a `tern::http_error` thrown, a limit,
    /// a validation chain; docs/errors.md): plain text, or for a client that prefers JSON
    /// RFC 9457 problem details (`title`, `status`, and `detail` or a validation's
    /// `errors`).
    api_doc& error_response(int status, std::string text) {
        auto& r = op_["responses"][std::to_string(status)];
        r["description"] = std::move(text);
        r["content"]["text/plain"]["schema"] = json{{"type", "string"}};
        r["content"]["application/problem+json"]["schema"] = problem_schema();
        return *this;
    }
    /// Merges `fields` into the Operation Object as it stands (`security`, `callbacks`,
    /// `x-...` extensions, or anything the setters do not cover); a field given here
    /// replaces the setters' field of the same name.
    api_doc& extend(const json& fields) {
        op_.update(fields);
        return *this;
    }
    /// Leaves the route out of the document.
    api_doc& hidden(bool yes = true) noexcept {
        hidden_ = yes;
        return *this;
    }

    /// The Operation Object so far.
    const json& operation() const noexcept { return op_; }
    /// Whether the route is left out.
    bool is_hidden() const noexcept { return hidden_; }

private:
    static json problem_schema() {
        return json{
            {"type", "object"},
            {"required", {"title", "status"}},
            {"properties",
             {{"title", {{"type", "string"}}},
              {"status", {{"type", "integer"}}},
              {"detail", {{"type", "string"}}},
              {"errors",
               {{"type", "object"},
                {"additionalProperties", {{"type", "array"}, {"items", {{"type", "string"}}}}}}}}}};
    }

    template <class T>
    api_doc& add_param(const char* in, std::string name, std::string text, bool required) {
        json p{{"name", std::move(name)},
               {"in", in},
               {"required", required},
               {"schema", schema_of<T>()}};
        if (!text.empty()) p["description"] = std::move(text);
        op_["parameters"].push_back(std::move(p));
        return *this;
    }

    json op_ = json::object();
    bool hidden_ = false;
};

/// `f` as a route handler that carries `doc` into the OpenAPI document. Combines with
/// `tern::body_limit` and `tern::blocking` in either order.
template <class F>
route_handler documented(api_doc doc, F f) {
    route_handler r(std::move(f));
    r.doc(std::make_shared<const api_doc>(std::move(doc)));
    return r;
}

/// The document's own fields, for `app.openapi(path, info)`.
struct openapi_info {
    std::string title = "API";      ///< info.title
    std::string version = "1.0.0";  ///< info.version: the API's version, not OpenAPI's
    std::string description;        ///< info.description (CommonMark); empty: left out
    /// Merged into the top-level object last: `servers`, `components` (schemas referred to
    /// with `$ref`), `security`, `tags`, `externalDocs`, or fields of `info` given in full.
    json extra = json::object();
};

}  // namespace tern

// Builds the OpenAPI 3.1 document from the route table (see openapi_document.hpp).

#include "app/openapi_document.hpp"

#include "routing/path_pattern.hpp"

#include <array>
#include <stdexcept>
#include <vector>

namespace tern::detail {

namespace {

// One variable segment of a pattern, as the document names it.
struct path_variable {
    std::string name;
    bool tail = false;      // `<name>` or a final `*`: the rest of the path
    bool wildcard = false;  // `*`: captured by nothing, named here only
};

// The template and its variables, in order.
struct path_template {
    std::string text;
    std::vector<path_variable> variables;
};

path_template template_of(std::string_view pattern) {
    const path_pattern parsed(pattern);
    path_template out;
    int wildcards = 0;
    for (const pattern_segment& s : parsed.segments()) {
        out.text += '/';
        if (s.kind == segment_kind::literal) {
            out.text += s.text;
            continue;
        }
        path_variable v;
        v.tail = matches_tail(s.kind);
        v.wildcard = s.kind == segment_kind::wildcard || s.kind == segment_kind::tail_wildcard;
        if (v.wildcard) {
            ++wildcards;
            v.name = wildcards == 1 ? "wildcard" : "wildcard" + std::to_string(wildcards);
        } else {
            v.name = s.text;
        }
        out.text += '{' + v.name + '}';
        out.variables.push_back(std::move(v));
    }
    if (out.text.empty()) out.text = "/";
    return out;
}

// OpenAPI's name for an HTTP method, or nullptr for one it has no field for.
const char* operation_field(std::string_view method) noexcept {
    static constexpr std::array<std::pair<std::string_view, const char*>, 8> known{{
        {"GET", "get"},
        {"PUT", "put"},
        {"POST", "post"},
        {"DELETE", "delete"},
        {"OPTIONS", "options"},
        {"HEAD", "head"},
        {"PATCH", "patch"},
        {"TRACE", "trace"},
    }};
    for (const auto& [name, field] : known) {
        if (name == method) return field;
    }
    return nullptr;
}

bool declares_path_param(const json& op, std::string_view name) {
    const auto params = op.find("parameters");
    if (params == op.end() || !params->is_array()) return false;
    for (const json& p : *params) {
        if (p.is_object() && p.value("in", "") == "path" && p.value("name", "") == name) {
            return true;
        }
    }
    return false;
}

json operation_for(const path_template& path, const api_doc* doc) {
    json op = doc != nullptr ? doc->operation() : json::object();
    // Path variables the doc does not declare come first, as strings.
    json undeclared = json::array();
    for (const path_variable& v : path.variables) {
        if (declares_path_param(op, v.name)) continue;
        json p{
            {"name", v.name}, {"in", "path"}, {"required", true}, {"schema", {{"type", "string"}}}};
        if (v.tail) {
            p["description"] = "The rest of the path, slashes included.";
        } else if (v.wildcard) {
            p["description"] = "Any one path segment.";
        }
        undeclared.push_back(std::move(p));
    }
    if (!undeclared.empty()) {
        if (op.contains("parameters") && op["parameters"].is_array()) {
            for (json& p : op["parameters"]) undeclared.push_back(std::move(p));
        }
        op["parameters"] = std::move(undeclared);
    }
    if (!op.contains("responses")) {
        op["responses"] = {{"default", {{"description", "Not described."}}}};
    }
    return op;
}

}  // namespace

const std::shared_ptr<const api_doc>& sse_doc() {
    static const auto doc = std::make_shared<const api_doc>(
        api_doc()
            .summary("Server-Sent Events")
            .header_param<std::string>("Last-Event-ID", "The last event id seen, on a reconnect")
            .response(200, "An event stream (HTML's Server-Sent Events)", json{{"type", "string"}},
                      "text/event-stream"));
    return doc;
}

const std::shared_ptr<const api_doc>& ws_doc() {
    static const auto doc = std::make_shared<const api_doc>(
        api_doc()
            .summary("WebSocket")
            .description("Send an RFC 6455 opening handshake (`Upgrade: websocket`).")
            .response(101, "Switched to the WebSocket protocol"));
    return doc;
}

void check_doc_against_pattern(const api_doc& doc, std::string_view pattern) {
    const path_template path = template_of(pattern);
    const json& op = doc.operation();
    const auto params = op.find("parameters");
    if (params == op.end() || !params->is_array()) return;
    std::vector<std::string> seen;
    for (const json& p : *params) {
        if (!p.is_object() || p.value("in", "") != "path") continue;
        const std::string name = p.value("name", "");
        bool in_pattern = false;
        for (const path_variable& v : path.variables) in_pattern = in_pattern || v.name == name;
        if (!in_pattern) {
            throw std::invalid_argument("tern: the description of route \"" + std::string(pattern) +
                                        "\" names path parameter \"" + name +
                                        "\", which the pattern does not capture");
        }
        for (const std::string& s : seen) {
            if (s == name) {
                throw std::invalid_argument("tern: the description of route \"" +
                                            std::string(pattern) + "\" names path parameter \"" +
                                            name + "\" twice");
            }
        }
        seen.push_back(name);
    }
}

std::string openapi_path(std::string_view pattern) { return template_of(pattern).text; }

json openapi_document(const router& routes, const route_docs& docs, const openapi_info& info) {
    json paths = json::object();
    routes.for_each_route([&](std::string_view method, std::string_view pattern) {
        const char* field = operation_field(method);
        if (field == nullptr) return;
        const auto found = docs.find(std::pair<std::string, std::string>(method, pattern));
        const api_doc* doc = found != docs.end() ? found->second.get() : nullptr;
        if (doc != nullptr && doc->is_hidden()) return;
        const path_template path = template_of(pattern);
        paths[path.text][field] = operation_for(path, doc);
    });
    json info_object{{"title", info.title}, {"version", info.version}};
    if (!info.description.empty()) info_object["description"] = info.description;
    json document{
        {"openapi", "3.1.0"}, {"info", std::move(info_object)}, {"paths", std::move(paths)}};
    if (info.extra.is_object()) document.update(info.extra);
    return document;
}

}  // namespace tern::detail

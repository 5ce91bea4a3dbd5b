#pragma once
/// @file json.hpp
/// JSON for tern handlers with nlohmann_json: `ctx.json(value)` and `ctx.body_as<T>()`.
/// The only tern header that includes nlohmann_json; include it where you use JSON.

#include <tern/context.hpp>
#include <tern/http_error.hpp>

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>
#include <type_traits>

namespace tern {

/// The JSON value type tern uses (nlohmann::json).
using json = nlohmann::json;

namespace detail {

/// Connects context's JSON members to nlohmann_json.
template <>
struct json_support<json_tag> {
    /// The JSON document type (for tern::testing::response::json).
    using value_type = nlohmann::json;
    /// What `ctx.json({{"key", value}, ...})` takes.
    using initializer_list = nlohmann::json::initializer_list_t;

    /// `value` as compact JSON text; a value that cannot be represented (e.g. invalid UTF-8
    /// in a string) throws, which becomes a 500 like any handler exception. A document
    /// (json or ordered_json) is serialized where it is: copying it would cost its size in
    /// memory and, being recursive, stack as deep as the document.
    template <class T>
    static std::string dump(const T& value) {
        if constexpr (std::is_same_v<T, nlohmann::json> ||
                      std::is_same_v<T, nlohmann::ordered_json>) {
            return value.dump();
        } else {
            return nlohmann::json(value).dump();
        }
    }
    /// A JSON literal as compact text.
    static std::string dump(initializer_list init) { return nlohmann::json(init).dump(); }

    /// `text` parsed and converted to T; http_error 400 when either step fails.
    template <class T>
    static T parse(std::string_view text) {
        nlohmann::json document;
        try {
            document = nlohmann::json::parse(text);
        } catch (const nlohmann::json::exception& e) {
            // parse_error, and out_of_range for a number no double holds ("1e999").
            throw bad_request(
                std::string("malformed JSON in the request body: ").append(message_of(e.what())));
        }
        if constexpr (std::is_same_v<T, nlohmann::json>) {
            return document;
        } else {
            try {
                return document.get<T>();
            } catch (const nlohmann::json::exception& e) {
                throw bad_request(std::string("the JSON request body does not fit: ")
                                      .append(message_of(e.what())));
            }
        }
    }

private:
    // nlohmann's messages start with "[json.exception.<kind>.<id>] "; the rest is for people.
    static std::string_view message_of(std::string_view what) noexcept {
        if (!what.empty() && what.front() == '[') {
            const auto end = what.find("] ");
            if (end != std::string_view::npos) what.remove_prefix(end + 2);
        }
        return what;
    }
};

}  // namespace detail

/// Reads member `name` of the JSON object `j` into `out`, for a `from_json` that wants the
/// client told which member is wrong: a member that is missing, or whose value does not
/// convert to T, throws tern::bad_request naming it ("the JSON request body does not fit:
/// 'title' must be string, but is number"), which `body_as` answers as a 400 and
/// `body_validator` reports under "body". nlohmann_json's own messages do not name it.
template <class T>
void json_member(const json& j, std::string_view name, T& out) {
    const std::string quoted = "the JSON request body does not fit: '" + std::string(name) + "' ";
    if (!j.is_object()) throw bad_request("the JSON request body does not fit: not an object");
    const auto it = j.find(name);
    if (it == j.end()) throw bad_request(quoted + "is missing");
    try {
        it->get_to(out);
    } catch (const nlohmann::json::type_error& e) {
        std::string_view what = e.what();
        // "[json.exception.type_error.302] type must be string, but is number"
        if (const auto end = what.find("] "); end != std::string_view::npos) {
            what.remove_prefix(end + 2);
        }
        if (what.substr(0, 5) == "type ") what.remove_prefix(5);
        throw bad_request(quoted + std::string(what));
    }
}

}  // namespace tern

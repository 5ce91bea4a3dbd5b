#include "handling/errors.hpp"

#include "http/header_values.hpp"
#include "http/status.hpp"
#include "http/token.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>

namespace tern::detail {

// ---- exception mappers -------------------------------------------------------------------

namespace {

// Whether the type of `derived` is (publicly) derived from the type of `base`: a null
// pointer to the one thrown and caught as a pointer to the other.
bool derives_from(const exception_mapper& derived, const exception_mapper& base) {
    try {
        derived.throw_pointer();
    } catch (...) {
        return base.catches_pointer();
    }
    return false;
}

}  // namespace

void exception_mappers::add(exception_mapper m) {
    for (auto& existing : mappers_) {
        if (*existing.type == *m.type) {
            existing = std::move(m);
            return;
        }
    }
    // Kept in an order where a type comes before its bases: insert before the first mapper
    // for a base of the new type.
    auto at = std::find_if(mappers_.begin(), mappers_.end(),
                           [&](const exception_mapper& e) { return derives_from(m, e); });
    mappers_.insert(at, std::move(m));
}

bool exception_mappers::handle_current(context& ctx, bool is_http_error) const {
    for (const auto& m : mappers_) {
        if (is_http_error && !m.for_http_error) continue;
        if (m.handle(ctx)) return true;
    }
    return false;
}

// ---- error bodies ------------------------------------------------------------------------

void set_error(response& res, int status, std::string_view message) {
    res.status = status;
    res.file = file_body{};
    res.content_type = "text/plain; charset=utf-8";
    res.body.assign(message);
}

namespace {

// The weight (thousandths) `headers`' Accept fields give `type` ("application/json" or
// "text/plain"): the most specific matching range wins; -1 when nothing matches.
int accept_weight(std::span<const header_field> headers, std::string_view type) {
    const auto slash = type.find('/');
    const auto top = type.substr(0, slash);
    int best_specificity = -1;
    int weight = -1;
    for_each_member(headers, "accept", [&](std::string_view member) {
        const auto [range, q] = split_weight(member);
        int specificity = -1;
        if (iequals(range, type)) {
            specificity = 3;
        } else if (type == "application/json" && range.size() > 5 &&
                   iequals(range.substr(range.size() - 5), "+json") &&
                   iequals(range.substr(0, 12), "application/")) {
            specificity = 2;
        } else if (range.size() == top.size() + 2 && iequals(range.substr(0, top.size()), top) &&
                   range.substr(top.size()) == "/*") {
            specificity = 1;
        } else if (range == "*/*") {
            specificity = 0;
        }
        if (specificity > best_specificity) {
            best_specificity = specificity;
            weight = q;
        }
    });
    return weight;
}

}  // namespace

bool prefers_json(std::span<const header_field> headers) noexcept {
    return accept_weight(headers, "application/json") > accept_weight(headers, "text/plain");
}

void render_json_error(response& res, const field_errors& fields) {
    nlohmann::json problem = {{"status", res.status}, {"title", reason_phrase(res.status)}};
    if (!fields.empty()) {
        auto& errors = problem["errors"];
        for (const auto& [field, messages] : fields) errors[field] = messages;
    } else if (res.body != reason_phrase(res.status)) {
        problem["detail"] = res.body;
    }
    // The message may carry bytes that are not UTF-8 (it can quote the request): replace
    // them rather than fail.
    res.body = problem.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    // RFC 9457 3: the media type of a problem details object, the one clients look for.
    res.content_type = "application/problem+json";
}

}  // namespace tern::detail

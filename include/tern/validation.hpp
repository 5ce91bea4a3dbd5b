#pragma once
/// @file validation.hpp
/// Validation chains for request values (Javalin's Validator in C++):
///
///     const int n = ctx.query_param_as<int>("n")
///                       .check([](int v) { return v > 0; }, "must be positive")
///                       .get();
///
/// A validator holds one value read from the request (a query, path or form parameter, a
/// header, a cookie, or the JSON body), converted to T, and the messages of the checks it
/// failed. `get()` answers 400 listing them; `tern::require_valid(a, b, ...)` answers one 400
/// listing the failures of several validators at once (see docs/validation.md).

#include <tern/detail/convert.hpp>
#include <tern/export.hpp>
#include <tern/http_error.hpp>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace tern {

/// Messages per field name, as a validation failure reports them: `{"n": ["must be
/// positive"], "name": ["is required"]}`.
using field_errors = std::map<std::string, std::vector<std::string>, std::less<>>;

/// The 400 a failed validation answers: `what()` lists each field and message on its own
/// line ("n: must be positive"), a JSON client gets them as the `errors` member of the
/// problem details (docs/validation.md). Map it with `app.exception<tern::validation_error>`
/// to answer in another shape.
class TERN_API validation_error : public bad_request {
public:
    /// A 400 listing `errors` (which should not be empty).
    explicit validation_error(field_errors errors)
        : bad_request(describe(errors)),
          errors_(std::make_shared<const field_errors>(std::move(errors))) {}

    /// Adds a header field to the error response (see `http_error::header`).
    validation_error& header(std::string_view name, std::string_view value) {
        http_error::header(name, value);
        return *this;
    }

    /// Every failing field and its messages.
    const field_errors& errors() const noexcept { return *errors_; }

    /// `errors` as text, one "field: message" line per message.
    static std::string describe(const field_errors& errors) {
        std::string text;
        for (const auto& [field, messages] : errors) {
            for (const auto& m : messages) {
                if (!text.empty()) text += '\n';
                text.append(field).append(": ").append(m);
            }
        }
        return text.empty() ? std::string("Bad Request") : text;
    }

private:
    std::shared_ptr<const field_errors> errors_;  // shared: copying an exception must not throw
};

/// A value read from the request, converted to T, with the checks run on it so far. Made by
/// `ctx.query_param_as<T>(name)` and its siblings (`path_param_as`, `form_param_as`,
/// `header_as`, `cookie_as`, `body_validator`). When `Nullable` (after `allow_null()`),
/// a missing value is not an error and `get()` returns `std::optional<T>`.
template <class T, bool Nullable = false>
class basic_validator {
public:
    /// What `get()` returns: T, or std::optional<T> when nullable.
    using result_type = std::conditional_t<Nullable, std::optional<T>, T>;

    /// A validator for field `name` holding `value` (std::nullopt: the field is missing).
    basic_validator(std::string name, std::optional<T> value)
        : name_(std::move(name)), value_(std::move(value)) {}

    /// A validator for field `name` whose value is `text` converted to T (integers, floating
    /// point, bool, std::string, as the typed getters of tern::context convert them);
    /// std::nullopt: missing. Text that does not convert is an error of the field ("must be
    /// an integer in range").
    static basic_validator from_text(std::string name, std::optional<std::string_view> text) {
        if (!text) return basic_validator(std::move(name), std::nullopt);
        auto value = detail::convert_param<T>(*text);
        basic_validator v(std::move(name), std::move(value));
        if (!v.value_) {
            v.unconvertible_ = true;
            v.add_error(v.name_, std::string("must be ") + detail::param_type_name<T>());
        }
        return v;
    }

    /// A validator for field `name` that failed before it had a value (e.g. a body that is
    /// not JSON): `message` is its error.
    static basic_validator failed(std::string name, std::string message) {
        basic_validator v(std::move(name), std::nullopt);
        v.unconvertible_ = true;
        v.add_error(v.name_, std::move(message));
        return v;
    }

    /// Runs `pred(value)` when there is a value; when it returns false, `message` becomes an
    /// error of the field. A missing or unconvertible value is not checked.
    template <class Pred>
    basic_validator& check(Pred&& pred, std::string message) {
        static_assert(std::is_invocable_r_v<bool, Pred&, const T&>,
                      "tern: a check is callable as pred(const T&) -> bool");
        if (value_ && !pred(std::as_const(*value_))) add_error(name_, std::move(message));
        return *this;
    }

    /// As `check`, with the error reported under `field` instead of the validator's name:
    /// for checks on a part of a body (`body_validator<todo>().check("title", ...)`).
    template <class Pred>
    basic_validator& check(std::string field, Pred&& pred, std::string message) {
        static_assert(std::is_invocable_r_v<bool, Pred&, const T&>,
                      "tern: a check is callable as pred(const T&) -> bool");
        if (value_ && !pred(std::as_const(*value_)))
            add_error(std::move(field), std::move(message));
        return *this;
    }

    /// When the value is missing, uses `fallback` in its place (later checks see it).
    basic_validator& default_value(T fallback) {
        if (!value_ && !unconvertible_) value_ = std::move(fallback);
        return *this;
    }

    /// A missing value is no error: the returned validator's `get()` is std::optional<T>
    /// (std::nullopt when missing). A value that is present is checked as before.
    basic_validator<T, true> allow_null() const& {
        static_assert(!Nullable, "tern: allow_null() on a validator that already allows it");
        return basic_validator<T, true>(name_, value_, errors_, unconvertible_);
    }
    /// As above, moving the value.
    basic_validator<T, true> allow_null() && {
        static_assert(!Nullable, "tern: allow_null() on a validator that already allows it");
        return basic_validator<T, true>(std::move(name_), std::move(value_), std::move(errors_),
                                        unconvertible_);
    }

    /// The value. Throws tern::validation_error (400) naming the field and its messages when
    /// a check failed, the value did not convert, or (unless nullable) it is missing
    /// ("is required").
    result_type get() const& {
        throw_if_invalid();
        if constexpr (Nullable) {
            return value_;
        } else {
            return *value_;
        }
    }
    /// As above, moving the value out.
    result_type get() && {
        throw_if_invalid();
        if constexpr (Nullable) {
            return std::move(value_);
        } else {
            return std::move(*value_);
        }
    }

    /// The value, or `fallback` when it is missing; a failed check or conversion still
    /// throws tern::validation_error.
    T value_or(T fallback) const {
        if (!value_ && !unconvertible_) return fallback;
        throw_if_invalid();
        return *value_;
    }

    /// Whether `get()` would return a value rather than throw.
    bool valid() const { return errors().empty(); }

    /// The failures `get()` would report: each field's messages, with "is required" for a
    /// missing value that is neither nullable nor defaulted. Empty when valid.
    field_errors errors() const {
        field_errors all = errors_;
        if (!Nullable && !value_ && !unconvertible_) all[name_].emplace_back("is required");
        return all;
    }

    /// The field's name as errors report it.
    const std::string& name() const noexcept { return name_; }

private:
    template <class, bool>
    friend class basic_validator;

    basic_validator(std::string name, std::optional<T> value, field_errors errors,
                    bool unconvertible)
        : name_(std::move(name)),
          value_(std::move(value)),
          errors_(std::move(errors)),
          unconvertible_(unconvertible) {}

    void add_error(std::string field, std::string message) {
        errors_[std::move(field)].push_back(std::move(message));
    }

    void throw_if_invalid() const {
        auto all = errors();
        if (!all.empty()) throw validation_error(std::move(all));
    }

    std::string name_;
    std::optional<T> value_;
    field_errors errors_;
    bool unconvertible_ = false;  // present but not a T, or failed before it had a value
};

/// A validator whose `get()` returns T and requires the value (see basic_validator).
template <class T>
using validator = basic_validator<T, false>;

/// A validator whose `get()` returns std::optional<T> (see `basic_validator::allow_null`).
template <class T>
using nullable_validator = basic_validator<T, true>;

/// The failures of every validator given, merged by field name (Javalin's collectErrors);
/// empty when all are valid.
template <class... Validators>
field_errors collect_errors(const Validators&... validators) {
    field_errors all;
    auto merge = [&all](const field_errors& one) {
        for (const auto& [field, messages] : one) {
            auto& to = all[field];
            to.insert(to.end(), messages.begin(), messages.end());
        }
    };
    (merge(validators.errors()), ...);
    return all;
}

/// Throws one tern::validation_error (400) listing the failures of every validator given,
/// when any failed; afterwards their `get()` calls do not throw.
template <class... Validators>
void require_valid(const Validators&... validators) {
    auto all = collect_errors(validators...);
    if (!all.empty()) throw validation_error(std::move(all));
}

}  // namespace tern

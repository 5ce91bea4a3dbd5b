#pragma once
/// @file exception_mapper.hpp
/// One `app::exception<E>` mapper, type-erased (built by the template in app.hpp).

#include <tern/http_error.hpp>

#include <functional>
#include <type_traits>
#include <typeinfo>
#include <utility>

namespace tern {

class context;

namespace detail {
/// One `app::exception<E>` mapper, type-erased. Built by the template; not for users.
struct exception_mapper {
    const std::type_info* type = nullptr;  ///< typeid(E)
    bool for_http_error = false;           ///< E is http_error or derives from it
    /// Rethrows the exception being handled; when it is an E, calls the user's function and
    /// returns true, otherwise returns false.
    std::function<bool(context&)> handle;
    /// Throws a null E*, so that `catches_pointer` of another mapper can tell whether E
    /// derives from that mapper's type.
    std::function<void()> throw_pointer;
    /// Rethrows the exception being handled; true when it is a pointer convertible to E*.
    std::function<bool()> catches_pointer;
};

/// The mapper `app::exception<E>(fn)` registers: `fn(E&, context&)` for exceptions of type
/// E and types derived from it.
template <class E, class F>
exception_mapper make_exception_mapper(F fn) {
    exception_mapper m;
    m.type = &typeid(E);
    m.for_http_error = std::is_base_of_v<http_error, E>;
    m.handle = [fn = std::move(fn)](context& ctx) -> bool {
        try {
            throw;
        } catch (E& e) {
            fn(e, ctx);
            return true;
        } catch (...) {
            return false;
        }
    };
    m.throw_pointer = [] { throw static_cast<E*>(nullptr); };
    m.catches_pointer = []() -> bool {
        try {
            throw;
        } catch (E*) {
            return true;
        } catch (...) {
            return false;
        }
    };
    return m;
}
}  // namespace detail

}  // namespace tern

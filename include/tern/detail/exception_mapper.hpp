#pragma once
/// @file exception_mapper.hpp
/// One `app::exception<E>` mapper, type-erased (built by the template in app.hpp).

#include <functional>
#include <typeinfo>

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
}  // namespace detail

}  // namespace tern

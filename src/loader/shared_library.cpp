#include "loader/shared_library.hpp"

#include <dlfcn.h>

#include <stdexcept>
#include <string>

namespace tern::detail {

namespace {

std::string loader_reason() {
    const char* why = ::dlerror();
    return why != nullptr ? why : "unknown reason";
}

}  // namespace

void* load_shared_library(const char* soname, std::string_view needed_for) {
    void* library = ::dlopen(soname, RTLD_NOW | RTLD_LOCAL);
    if (library == nullptr) {
        throw std::runtime_error(std::string("tern: ") + soname + " is needed for " +
                                 std::string(needed_for) +
                                 " but could not be loaded: " + loader_reason());
    }
    return library;
}

void* shared_library_function(void* library, const char* soname, const char* name) {
    void* function = ::dlsym(library, name);
    if (function == nullptr) {
        throw std::runtime_error(std::string("tern: ") + soname + " has no " + name + ": " +
                                 loader_reason());
    }
    return function;
}

}  // namespace tern::detail

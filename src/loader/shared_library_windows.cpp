// The Windows twin of shared_library.cpp: LoadLibraryW and GetProcAddress. A DLL is found
// as Windows finds one (beside the executable first). Never freed, as on POSIX.
#include "loader/shared_library.hpp"

#include <windows.h>

#include <stdexcept>
#include <string>

namespace tern::detail {

namespace {

std::string loader_reason() { return "Windows error " + std::to_string(::GetLastError()); }

}  // namespace

void* load_shared_library(const char* soname, std::string_view needed_for) {
    // The names are ASCII (zlib1.dll, libssl-3-x64.dll): widened byte by byte.
    const std::string narrow(soname);
    const std::wstring wide(narrow.begin(), narrow.end());
    HMODULE library = ::LoadLibraryW(wide.c_str());
    if (library == nullptr) {
        throw std::runtime_error(std::string("tern: ") + soname + " is needed for " +
                                 std::string(needed_for) +
                                 " but could not be loaded: " + loader_reason());
    }
    return reinterpret_cast<void*>(library);
}

void* shared_library_function(void* library, const char* soname, const char* name) {
    const FARPROC function = ::GetProcAddress(static_cast<HMODULE>(library), name);
    if (function == nullptr) {
        throw std::runtime_error(std::string("tern: ") + soname + " has no " + name + ": " +
                                 loader_reason());
    }
    return reinterpret_cast<void*>(function);
}

}  // namespace tern::detail

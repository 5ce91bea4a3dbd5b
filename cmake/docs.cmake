# The API reference: target `tern_docs` runs Doxygen over include/tern (docs/Doxyfile.in)
# into <build>/docs/html. Defined only when tern is the top project and Doxygen is found;
# never part of `all`. scripts/docs.sh installs Doxygen and builds it. Doxygen fails on any
# warning (WARN_AS_ERROR = FAIL_ON_WARNINGS), so an undocumented public declaration fails
# the target.
if(NOT TERN_MASTER_PROJECT)
    return()
endif()

# A doxygen removed since the last configure would make FindDoxygen fail the whole configure.
if(DOXYGEN_EXECUTABLE AND NOT EXISTS "${DOXYGEN_EXECUTABLE}")
    unset(DOXYGEN_EXECUTABLE CACHE)
endif()
find_package(Doxygen QUIET)
if(NOT DOXYGEN_FOUND)
    message(STATUS "tern: Doxygen not found; no tern_docs target (scripts/docs.sh installs it)")
    return()
endif()

set(TERN_DOCS_OUTPUT_DIR "${PROJECT_BINARY_DIR}/docs")
configure_file("${PROJECT_SOURCE_DIR}/docs/Doxyfile.in" "${TERN_DOCS_OUTPUT_DIR}/Doxyfile" @ONLY)
# Always runs (no stamp file): a failed run must not look up to date, and the headers are few.
add_custom_target(tern_docs
    COMMAND Doxygen::doxygen "${TERN_DOCS_OUTPUT_DIR}/Doxyfile"
    WORKING_DIRECTORY "${TERN_DOCS_OUTPUT_DIR}"
    COMMENT "Doxygen: API reference of include/tern in ${TERN_DOCS_OUTPUT_DIR}/html"
    VERBATIM)

#pragma once
/// @file allocation_counter.hpp
/// Global allocations of the unit-test binary, counted by its replaced operator new
/// (allocation_counter.cpp), so a test can prove a path allocates nothing, or little.

namespace tern_test {

/// How many times operator new (any non-aligned form) has been called so far.
long allocation_count() noexcept;

}  // namespace tern_test

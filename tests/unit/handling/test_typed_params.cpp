// The conversion behind the typed getters (ctx.query_param<double>, path_param_as<float>, ...;
// include/tern/detail/convert.hpp): floating point is read as std::from_chars reads it, on
// every standard library, without from_chars (libc++ 14 has none for floating point) and
// without the C locale's decimal point.

#include <tern/detail/convert.hpp>

#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <string>

namespace unit_test_handling_typed_params {

using tern::detail::convert_param;

TEST_CASE("a floating-point parameter converts in the forms std::from_chars reads", "[params]") {
    CHECK(convert_param<double>("1.5") == 1.5);
    CHECK(convert_param<double>("2.25") == 2.25);
    CHECK(convert_param<double>("-3") == -3.0);
    CHECK(convert_param<double>(".5") == 0.5);
    CHECK(convert_param<double>("5.") == 5.0);
    CHECK(convert_param<double>("0.000125") == 0.000125);
    CHECK(convert_param<double>("2.5e3") == 2500.0);
    CHECK(convert_param<double>("25E-1") == 2.5);
    CHECK(convert_param<double>("1e+5") == 100000.0);
    CHECK(convert_param<double>("0.1") == 0.1);
    CHECK(convert_param<double>("123456789012345678901234567890") ==
          123456789012345678901234567890.0);
    CHECK(convert_param<double>("1.7976931348623157e308") == std::numeric_limits<double>::max());
    CHECK(convert_param<float>("0.1") == 0.1f);
    CHECK(convert_param<long double>("0.1") == 0.1L);
    const auto zero = convert_param<double>("-0");
    REQUIRE(zero);
    CHECK(*zero == 0.0);
    CHECK(std::signbit(*zero));
    // Subnormal, but not 0: kept, as std::from_chars keeps it.
    CHECK(convert_param<double>("1e-310") > 0.0);
}

TEST_CASE("infinity and NaN convert in any case, with a sign", "[params]") {
    CHECK(convert_param<double>("inf") == std::numeric_limits<double>::infinity());
    CHECK(convert_param<double>("-Infinity") == -std::numeric_limits<double>::infinity());
    CHECK(convert_param<float>("INF") == std::numeric_limits<float>::infinity());
    for (const char* nan : {"nan", "NaN", "-nan", "nan()", "nan(0x7f_ab)"}) {
        INFO(nan);
        const auto value = convert_param<double>(nan);
        REQUIRE(value);
        CHECK(std::isnan(*value));
    }
}

TEST_CASE("a floating-point parameter out of range or not wholly a number does not convert",
          "[params]") {
    for (const char* bad : {"",   "-",       ".",    "-.",       "+1",    " 1",    "1 ",
                            "1e", "1e+",     "1e-",  "1ex",      "1.5.2", "0x1p3", "1,5",
                            "e5", "infinit", "nan(", "nan(a-b)", "--1",   "1e5e5", "1.5f"}) {
        INFO(bad);
        CHECK_FALSE(convert_param<double>(bad));
    }
    CHECK_FALSE(convert_param<double>("1e400"));
    CHECK_FALSE(convert_param<double>("-1e400"));
    CHECK_FALSE(convert_param<double>("1e-400"));
    CHECK_FALSE(convert_param<double>("1e99999999999999999999"));
    CHECK_FALSE(convert_param<float>("3.5e38"));
    CHECK_FALSE(convert_param<float>("1e-46"));
    CHECK(convert_param<double>("3.5e38") == 3.5e38);
    // Zero itself is not an underflow, however it is written.
    CHECK(convert_param<double>("0e-99999") == 0.0);
    CHECK(convert_param<double>("0.0000") == 0.0);
}

TEST_CASE("a long fraction is read whole, its exponent moved by its digits", "[params]") {
    const std::string many = "0." + std::string(400, '0') + "1e401";
    CHECK(convert_param<double>(many) == 1.0);
    CHECK(convert_param<double>("1" + std::string(300, '0') + "e-300") == 1.0);
}

}  // namespace unit_test_handling_typed_params

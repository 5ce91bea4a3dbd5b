#pragma once
// The one check of a tern::config: app(config), start() and every setter go through it, so
// a value refused by a setter is refused in a config too, with the same message.

#include <tern/config.hpp>

#include <string>
#include <vector>

namespace tern::detail {

/// One message per setting of `c` that cannot work ("max_line_size must be at least 16"),
/// in the order of tern::config; empty when every setting is valid. Static directories are
/// checked for their form here and for existence at start().
std::vector<std::string> config_faults(const config& c);

/// Throws std::invalid_argument when `c` has faults: "tern: " and every fault, joined by
/// "; ".
void check_config(const config& c);

/// At start: throws std::invalid_argument when `c.http3_port` is set but HTTP/3 cannot be
/// served (no TLS configuration, or a build with `-DTERN_HTTP3=OFF`; docs/http3.md).
void check_http3(const config& c);

}  // namespace tern::detail

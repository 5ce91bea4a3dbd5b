#pragma once
/// @file handler.hpp
/// The callable types a route, filter, error handler or request logger is stored as.

#include <chrono>
#include <functional>

namespace tern {

class context;

/// A request handler: reads the request from the context and sets the response.
using handler = std::function<void(context&)>;

/// Called once per request after the response is final (see `app::request_logger`) with
/// the time the handler chain took.
using log_handler = std::function<void(const context&, std::chrono::nanoseconds)>;

}  // namespace tern

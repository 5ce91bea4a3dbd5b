#pragma once
/// @file tern.hpp
/// Everything a tern application usually needs: the app, the context, http_error, config,
/// validators.
/// JSON support is separate (`<tern/json.hpp>`), so only users who want it pay for it.

#include <tern/app.hpp>
#include <tern/body_reader.hpp>
#include <tern/config.hpp>
#include <tern/context.hpp>
#include <tern/deferred.hpp>
#include <tern/http_error.hpp>
#include <tern/listen_fds.hpp>
#include <tern/multipart_reader.hpp>
#include <tern/rate_limit.hpp>
#include <tern/request_timeout.hpp>
#include <tern/sse.hpp>
#include <tern/stats.hpp>
#include <tern/stream.hpp>
#include <tern/task.hpp>
#include <tern/validation.hpp>
#include <tern/version.hpp>
#include <tern/websocket.hpp>

-- Pipelined GETs, the light-4j microservices-framework-benchmark shape:
--   wrk -t4 -c128 -d30s -s bench/wrk/pipeline.lua --latency http://127.0.0.1:8080 -- / 16
-- Every write carries DEPTH complete requests for PATH (defaults: "/" and 16); wrk counts
-- each response, so Requests/sec is responses per second. Latency is per batch.
local path, depth = "/", 16

function init(args)
  path = args[1] or path
  depth = tonumber(args[2]) or depth
  local one = wrk.format("GET", path)
  batch = string.rep(one, depth)
end

function request()
  return batch
end

-- GET /todos/{id} with an id drawn at random from 1..N (N seeded rows, default 1000):
--   wrk -t1 -c100 -d5s -s bench/wrk/todo-read.lua http://127.0.0.1:8080 -- 1000
-- bench/lib/apps.py seeds the N rows through POST /todos before it runs this.
local rows = 1000

function init(args)
    if args[1] then rows = tonumber(args[1]) end
    math.randomseed(os.time())
end

function request()
    return wrk.format("GET", "/todos/" .. math.random(1, rows))
end

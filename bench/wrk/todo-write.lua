-- POST /todos, one new row per request (the table grows during the run):
--   wrk -t1 -c100 -d5s -s bench/wrk/todo-write.lua http://127.0.0.1:8080/todos
wrk.method = "POST"
wrk.body = '{"title":"benchmark to-do: write the report","done":false}'
wrk.headers["Content-Type"] = "application/json"

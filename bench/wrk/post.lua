-- POST of a small JSON body, the shape of the Go-vs-Java JWT login benchmark:
--   wrk -t1 -c50 -d10s -s bench/wrk/post.lua http://127.0.0.1:8080/login
-- The servers under test answer with the body echoed back as application/json.
wrk.method = "POST"
wrk.body = '{"username":"tern","password":"correct horse battery staple","remember":true}'
wrk.headers["Content-Type"] = "application/json"

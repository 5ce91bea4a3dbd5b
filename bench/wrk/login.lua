-- POST /login with a demo user's JSON, the Go-vs-Java JWT login page's `wrk -s post.lua`
-- shape against real apps (tern's examples/jwt_login, bench/peers/go/app, bench/peers/node/app.js):
--   wrk -t1 -c50 -d5s -s bench/wrk/login.lua http://127.0.0.1:8080/login
-- Each answer is 200 with {"token": "<JWT>"}; anything else shows as non-2xx.
wrk.method = "POST"
wrk.body = '{"username":"alice","password":"wonderland"}'
wrk.headers["Content-Type"] = "application/json"

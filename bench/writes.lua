-- PUT creates of distinct nodes; each thread stops after its share of the total.
local threads = {}
function setup(thread)
  thread:set("tid", #threads + 1)
  table.insert(threads, thread)
end
function init(args)
  limit = tonumber(args[1])
  pw = args[2]
  prefix = args[3]
  sent = 0
  done_count = 0
end
function request()
  sent = sent + 1
  local path = "/clusterws/nodes/" .. prefix .. "t" .. tid .. "n" .. sent .. "?userName=root&userPW=" .. pw
  return wrk.format("PUT", path, {["Content-Type"] = "application/json"}, '{"groups":"bench","mgt":"kvm"}')
end
function response(status, headers, body)
  done_count = done_count + 1
  if done_count >= limit then
    wrk.thread:stop()
  end
end

local file, n = arg[1], tonumber(arg[2])
local noop = function() return true end
local env = setmetatable({ mode = function() return "load" end, io = io, ipairs = ipairs, pcall = pcall,
  type = type, tonumber = tonumber, math = math, string = string, LmodMessage = noop, LmodVersion = false },
  { __index = function() return noop end })
local f = assert(loadfile(file, "t", env))
local t0 = os.clock()
for i = 1, n do f() end
print(string.format("%s: %.1f us per evaluation", file:match("[^/]+/Core.*"), (os.clock() - t0) / n * 1e6))

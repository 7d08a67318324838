-- versions.lua N: a CPU-bound mix that runs unchanged on Lua 5.1-5.4
-- (no integer division, bit operators or goto), N rounds of the same work.
local N = tonumber(arg and arg[1]) or 1

local function fib(n)
  if n < 2 then return n end
  return fib(n - 1) + fib(n - 2)
end

local function sieve(n)
  local is = {}
  for i = 2, n do is[i] = true end
  local c = 0
  for i = 2, n do
    if is[i] then
      c = c + 1
      for j = i * i, n, i do is[j] = false end
    end
  end
  return c
end

local function strings(n)
  local t = {}
  for i = 1, n do t[#t + 1] = string.format("%d:%s", i, string.rep("x", i % 7)) end
  local s = table.concat(t, ",")
  local k = 0
  for w in string.gmatch(s, "[^,]+") do k = k + #w end
  return k
end

local function sorting(n)
  local t, x = {}, 12345
  for i = 1, n do x = (x * 1103515245 + 12345) % 2147483648; t[i] = x end
  table.sort(t)
  return t[1]
end

local acc = 0
for r = 1, N do
  acc = acc + fib(20) + sieve(20000) + strings(2000) + sorting(2000)
end
print(acc)

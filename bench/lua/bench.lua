-- bench/lua/bench.lua - CPU-bound Lua 5.4 workload for the dbtprof benchmark.
--
-- Usage: lua5.4 bench.lua [full|small] [ROUNDS]
-- A deterministic mix of interpreter-heavy kernels: n-body (floating point),
-- fannkuch-redux (small-integer array permutation), table sort with a
-- comparator closure, hash-table churn, string building/pattern matching and
-- closure/coroutine traffic.  Each kernel prints one checksum line, so the
-- output is identical natively and under emulation.  ROUNDS (default 1)
-- runs the whole set that many times: a longer run of the same mix.

local scale = arg[1] or "full"
local rounds = tonumber(arg[2] or "1")
local P
if scale == "small" then
  P = { nbody = 20000, fannkuch = 8, sort = 30000, hash = 40000,
        str = 10000, clos = 150000 }
elseif scale == "full" then
  P = { nbody = 150000, fannkuch = 9, sort = 200000, hash = 300000,
        str = 80000, clos = 1500000 }
else
  rounds = nil
end
if not rounds or rounds < 1 or rounds ~= math.floor(rounds) then
  io.stderr:write("usage: lua5.4 bench.lua [full|small] [ROUNDS]\n")
  os.exit(2)
end

-- Deterministic integer PRNG (Park-Miller), independent of math.random.
local seed = 42
local function rnd(n)
  seed = (seed * 16807) % 2147483647
  return seed % n
end

---------------------------------------------------------------- n-body
local function nbody(steps)
  local PI = 3.141592653589793
  local SOLAR_MASS = 4 * PI * PI
  local DPY = 365.24
  local bodies = {
    { x = 0, y = 0, z = 0, vx = 0, vy = 0, vz = 0, mass = SOLAR_MASS },
    { x = 4.84143144246472090e+00, y = -1.16032004402742839e+00,
      z = -1.03622044471123109e-01, vx = 1.66007664274403694e-03 * DPY,
      vy = 7.69901118419740425e-03 * DPY, vz = -6.90460016972063023e-05 * DPY,
      mass = 9.54791938424326609e-04 * SOLAR_MASS },
    { x = 8.34336671824457987e+00, y = 4.12479856412430479e+00,
      z = -4.03523417114321381e-01, vx = -2.76742510726862411e-03 * DPY,
      vy = 4.99852801234917238e-03 * DPY, vz = 2.30417297573763929e-05 * DPY,
      mass = 2.85885980666130812e-04 * SOLAR_MASS },
    { x = 1.28943695621391310e+01, y = -1.51111514016986312e+01,
      z = -2.23307578892655734e-01, vx = 2.96460137564761618e-03 * DPY,
      vy = 2.37847173959480950e-03 * DPY, vz = -2.96589568540237556e-05 * DPY,
      mass = 4.36624404335156298e-05 * SOLAR_MASS },
    { x = 1.53796971148509165e+01, y = -2.59193146099879641e+01,
      z = 1.79258772950371181e-01, vx = 2.68067772490389322e-03 * DPY,
      vy = 1.62824170038242295e-03 * DPY, vz = -9.51592254519715870e-05 * DPY,
      mass = 5.15138902046611451e-05 * SOLAR_MASS },
  }
  local n = #bodies
  local px, py, pz = 0, 0, 0
  for i = 1, n do
    local b = bodies[i]
    px = px + b.vx * b.mass; py = py + b.vy * b.mass; pz = pz + b.vz * b.mass
  end
  bodies[1].vx = -px / SOLAR_MASS
  bodies[1].vy = -py / SOLAR_MASS
  bodies[1].vz = -pz / SOLAR_MASS

  local function energy()
    local e = 0
    for i = 1, n do
      local bi = bodies[i]
      e = e + 0.5 * bi.mass * (bi.vx * bi.vx + bi.vy * bi.vy + bi.vz * bi.vz)
      for j = i + 1, n do
        local bj = bodies[j]
        local dx, dy, dz = bi.x - bj.x, bi.y - bj.y, bi.z - bj.z
        e = e - bi.mass * bj.mass / math.sqrt(dx * dx + dy * dy + dz * dz)
      end
    end
    return e
  end

  local e0 = energy()
  local dt = 0.01
  for _ = 1, steps do
    for i = 1, n do
      local bi = bodies[i]
      local bix, biy, biz, bim = bi.x, bi.y, bi.z, bi.mass
      local bivx, bivy, bivz = bi.vx, bi.vy, bi.vz
      for j = i + 1, n do
        local bj = bodies[j]
        local dx, dy, dz = bix - bj.x, biy - bj.y, biz - bj.z
        local d2 = dx * dx + dy * dy + dz * dz
        local mag = dt / (d2 * math.sqrt(d2))
        local bm = bj.mass * mag
        bivx = bivx - dx * bm; bivy = bivy - dy * bm; bivz = bivz - dz * bm
        bm = bim * mag
        bj.vx = bj.vx + dx * bm; bj.vy = bj.vy + dy * bm; bj.vz = bj.vz + dz * bm
      end
      bi.vx, bi.vy, bi.vz = bivx, bivy, bivz
      bi.x = bix + dt * bivx; bi.y = biy + dt * bivy; bi.z = biz + dt * bivz
    end
  end
  return string.format("nbody %d %.9f %.9f", steps, e0, energy())
end

---------------------------------------------------------------- fannkuch
local function fannkuch(n)
  local perm, perm1, count = {}, {}, {}
  local maxflips, checksum, r, nperm = 0, 0, n, 0
  for i = 0, n - 1 do perm1[i] = i end
  while true do
    while r ~= 1 do count[r - 1] = r; r = r - 1 end
    for i = 0, n - 1 do perm[i] = perm1[i] end
    local flips = 0
    local k = perm[0]
    while k ~= 0 do
      local i, j = 0, k
      while i < j do perm[i], perm[j] = perm[j], perm[i]; i = i + 1; j = j - 1 end
      flips = flips + 1
      k = perm[0]
    end
    if flips > maxflips then maxflips = flips end
    checksum = checksum + ((nperm % 2 == 0) and flips or -flips)
    while true do
      if r == n then
        return string.format("fannkuch %d %d %d", n, checksum, maxflips)
      end
      local p0 = perm1[0]
      for i = 0, r - 1 do perm1[i] = perm1[i + 1] end
      perm1[r] = p0
      count[r] = count[r] - 1
      if count[r] > 0 then break end
      r = r + 1
    end
    nperm = nperm + 1
  end
end

---------------------------------------------------------------- sort
local function sorting(n)
  local recs = {}
  for i = 1, n do
    recs[i] = { key = rnd(1000000), tag = i }
  end
  table.sort(recs, function(a, b)
    if a.key ~= b.key then return a.key < b.key end
    return a.tag < b.tag
  end)
  local h = 0
  for i = 1, n, 7 do h = (h * 31 + recs[i].key + recs[i].tag) % 1000000007 end
  local nums = {}
  for i = 1, n do nums[i] = rnd(1 << 30) end
  table.sort(nums)
  for i = 1, n, 13 do h = (h * 17 + nums[i]) % 1000000007 end
  return string.format("sort %d %d", n, h)
end

---------------------------------------------------------------- hash churn
local function hashing(n)
  local t, keys = {}, 0
  for i = 1, n do
    local k = "k" .. rnd(n // 2)
    local v = t[k]
    if v then t[k] = v + i else t[k] = i; keys = keys + 1 end
    if i % 3 == 0 then t["k" .. rnd(n // 2)] = nil end
  end
  local sum, cnt = 0, 0
  for k, v in pairs(t) do sum = (sum + v * #k) % 1000000007; cnt = cnt + 1 end
  local arr = {}
  for i = 1, n do arr[#arr + 1] = i * 3 end
  while #arr > n // 2 do table.remove(arr) end
  for i = 1, 50 do table.insert(arr, 1 + (i * 7) % #arr, i) end
  local s2 = 0
  for i = 1, #arr do s2 = (s2 + arr[i] * i) % 1000000007 end
  return string.format("hash %d %d %d %d", cnt, sum, keys, s2)
end

---------------------------------------------------------------- strings
local function strings(n)
  local words = { "alpha", "beta", "gamma", "delta", "epsilon", "zeta",
                  "eta", "theta", "iota", "kappa", "lambda", "mu" }
  local parts = {}
  for i = 1, n do
    parts[#parts + 1] = string.format("%s-%05d:%x", words[1 + rnd(#words)], i, rnd(65536))
  end
  local text = table.concat(parts, " ")
  local cnt = 0
  for w, num in text:gmatch("(%a+)%-(%d+)") do
    if #w > 4 then cnt = cnt + tonumber(num) % 97 end
  end
  local up = text:upper():gsub("A", "4"):gsub("E", "3")
  local found, pos = 0, 1
  while true do
    local s, e = string.find(up, "G4MM4%-%d+", pos)
    if not s then break end
    found = found + 1; pos = e + 1
  end
  local rev = {}
  for i = 1, n, 3 do rev[#rev + 1] = parts[i]:reverse():sub(2, 9) end
  local joined = table.concat(rev, ",")
  local h = 0
  for i = 1, #joined, 5 do h = (h * 131 + joined:byte(i)) % 1000000007 end
  return string.format("strings %d %d %d %d %d", #text, cnt, found, #up, h)
end

---------------------------------------------------------------- closures
local function closures(n)
  local function counter(step)
    local c = 0
    return function() c = c + step; return c end
  end
  local function compose(f, g) return function(x) return f(g(x)) end end
  local fs = {}
  for i = 1, 64 do fs[i] = counter(i) end
  local inc = function(x) return x + 1 end
  local dbl = function(x) return (x * 2) % 1000003 end
  local h = compose(inc, compose(dbl, inc))
  local acc = 0
  for i = 1, n do
    acc = (acc + fs[1 + i % 64]() + h(i)) % 1000000007
  end
  local gen = coroutine.wrap(function()
    local a, b = 0, 1
    for _ = 1, n // 10 do
      coroutine.yield(a)
      a, b = b, (a + b) % 1000000007
    end
    coroutine.yield(-1)
  end)
  local fsum = 0
  while true do
    local v = gen()
    if v < 0 then break end
    fsum = (fsum + v) % 1000000007
  end
  local mt = setmetatable({}, { __index = function(t, k) local v = k * k % 1009; rawset(t, k, v); return v end })
  local msum = 0
  for i = 1, n // 4 do msum = msum + mt[i % 5000] end
  return string.format("closures %d %d %d %d", n, acc, fsum, msum)
end

local kernels = {
  { "nbody", nbody, P.nbody }, { "fannkuch", fannkuch, P.fannkuch },
  { "sort", sorting, P.sort }, { "hash", hashing, P.hash },
  { "strings", strings, P.str }, { "closures", closures, P.clos },
}
local timing = os.getenv("BENCH_LUA_TIMING")
for _ = 1, rounds do
  for _, k in ipairs(kernels) do
    local t0 = os.clock()
    local line = k[2](k[3])
    if timing then io.stderr:write(string.format("%-9s %.3fs\n", k[1], os.clock() - t0)) end
    print(line)
  end
end

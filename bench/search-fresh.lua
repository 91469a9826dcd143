-- wrk script (bench/registry.py): every request is a search not asked before, so none is
-- answered from the server's read cache: a word from the list, and a page after a different
-- slug each time. Each thread counts by its own odd or even numbers.
local words = {"review", "poem", "translate%20code", "summarize", "draft", "lesson"}
local next_thread = 0
local counter = 0

function setup(thread)
  thread:set("parity", next_thread)
  next_thread = next_thread + 1
end

function request()
  counter = counter + 1
  local n = counter * 2 + (parity or 0)
  local path = "/api/v1/tools?limit=20&q=" .. words[n % #words + 1] .. "&cursor=tool-" .. n
  return wrk.format("GET", path)
end

-- wrk script (bench/registry.py): every request a search never asked before, so none is
-- answered from the server's read cache. The searches are the lines of the file named by
-- SEARCH_QUERIES (URL-encoded, each one different: what people type, keystroke by keystroke,
-- from the corpus's own words); each thread takes every other line, and a run that would need
-- more lines than the file has says so in bench/registry.py's output.
local queries = {}
for line in io.lines(os.getenv("SEARCH_QUERIES")) do
  queries[#queries + 1] = line
end
local next_thread = 0
local counter = 0

function setup(thread)
  thread:set("parity", next_thread)
  next_thread = next_thread + 1
end

function request()
  local n = counter * 2 + (parity or 0)
  counter = counter + 1
  return wrk.format("GET", "/api/v1/tools?limit=20&q=" .. queries[n % #queries + 1])
end

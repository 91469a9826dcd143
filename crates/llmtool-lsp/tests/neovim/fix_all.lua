-- Neovim's built-in LSP client (0.7+) on `llmtool lsp`: open a tool file, wait for its
-- diagnostics, ask for the "fix all" code action, apply its edit, save, and write what
-- happened to $RESULT, one fact per line. Run headless by scripts/lsp_clients.py.
local result = {}
local function note(line) table.insert(result, line) end
local function finish()
  vim.fn.writefile(result, os.getenv('RESULT'))
  vim.cmd('qall!')
end

local function codes(buf)
  local found = {}
  for _, d in ipairs(vim.diagnostic.get(buf)) do
    local lsp = d.user_data and d.user_data.lsp or {}
    table.insert(found, tostring(lsp.code or d.code))
  end
  table.sort(found)
  return found
end

vim.cmd('edit ' .. vim.fn.fnameescape(os.getenv('TOOL_FILE')))
local buf = vim.api.nvim_get_current_buf()
local id = vim.lsp.start_client({
  name = 'llmtool',
  cmd = { os.getenv('LLMTOOL'), 'lsp' },
  root_dir = vim.fn.getcwd(),
})
vim.lsp.buf_attach_client(buf, id)

if not vim.wait(20000, function() return #vim.diagnostic.get(buf) > 0 end, 20) then
  note('no diagnostics')
  return finish()
end
note('before ' .. table.concat(codes(buf), ' '))

local client = vim.lsp.get_client_by_id(id)
local params = {
  textDocument = { uri = vim.uri_from_bufnr(buf) },
  range = { start = { line = 0, character = 0 }, ['end'] = { line = vim.api.nvim_buf_line_count(buf), character = 0 } },
  context = { diagnostics = {}, only = { 'source.fixAll.llmtool' } },
}
local response = client.request_sync('textDocument/codeAction', params, 20000, buf)
local actions = response and response.result or {}
if #actions ~= 1 then
  note('fix-all actions ' .. #actions)
  return finish()
end
note('action ' .. actions[1].title)
vim.lsp.util.apply_workspace_edit(actions[1].edit, client.offset_encoding)
vim.cmd('write')

-- The change goes to the server, which checks again: the fixed codes disappear.
local fixed = vim.wait(20000, function()
  return not vim.tbl_contains(codes(buf), 'LT205') and not vim.tbl_contains(codes(buf), 'LT001')
end, 20)
note('after ' .. table.concat(codes(buf), ' ') .. (fixed and '' or ' (not updated)'))
finish()

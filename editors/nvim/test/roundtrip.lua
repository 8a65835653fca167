-- End-to-end check of the Neovim configuration against the real server:
--
--   nvim --clean --headless -l editors/nvim/test/roundtrip.lua [CUTE_LSP_BINARY]
--
-- Loads editors/nvim/lsp/cute_lsp.lua through vim.lsp.config/vim.lsp.enable,
-- opens the untoggled-phase bug fixture, waits for the CUTE001 diagnostic
-- (with its trace as related information) on the line marked
-- `# expect: untoggled-phase`, applies the preferred quick fix the way
-- `vim.lsp.buf.code_action()` does, and waits for the diagnostic to go away.
-- Every wait is bounded; any failure exits 1 with the reason on stderr.

local script = debug.getinfo(1, 'S').source:sub(2)
local root = vim.fs.normalize(vim.fn.fnamemodify(script, ':p:h:h:h:h'))
local binary = _G.arg[1] or (root .. '/target/release/cute-lsp')
local fixture = root .. '/tests/fixtures/untoggled_phase/jacobi_cluster_bug.py'
-- Per wait; the whole test stays well under a minute even on a loaded machine.
local TIMEOUT_MS = tonumber(vim.env.CUTE_LSP_NVIM_TIMEOUT_MS) or 30000

local function fail(message)
  io.stderr:write('nvim roundtrip: FAIL: ' .. message .. '\n')
  io.stderr:write('nvim: 0 passed, 1 failed\n')
  os.exit(1)
end

local function step(message)
  io.stdout:write('nvim roundtrip: ' .. message .. '\n')
end

--- Waits until `cond()` returns a truthy value and returns it; fails with
--- `what` after the timeout.
local function wait_for(what, cond)
  local value
  local ok = vim.wait(TIMEOUT_MS, function()
    value = cond()
    return value ~= nil and value ~= false
  end, 20)
  if not ok then
    fail('timed out after ' .. TIMEOUT_MS .. ' ms waiting for ' .. what)
  end
  return value
end

local ok, err = xpcall(function()
  if vim.fn.executable(binary) ~= 1 then
    fail(binary .. ' is not executable; build it with `cargo build --release -p cute-lsp`')
  end
  if vim.fn.has('nvim-0.11') ~= 1 then
    fail('Neovim 0.11 or later is needed for vim.lsp.config; this is ' .. tostring(vim.version()))
  end

  -- The configuration under test, found on 'runtimepath' as lsp/cute_lsp.lua;
  -- only the command is overridden, to run the freshly built binary.
  vim.opt.runtimepath:prepend(root .. '/editors/nvim')
  vim.lsp.config('cute_lsp', { cmd = { binary, '--stdio' } })
  vim.lsp.enable('cute_lsp')
  if vim.tbl_isempty(vim.lsp.config.cute_lsp.filetypes or {}) then
    fail('editors/nvim/lsp/cute_lsp.lua was not found on runtimepath')
  end

  local lines = vim.fn.readfile(fixture)
  local expect_lnum
  for i, line in ipairs(lines) do
    if line:find('# expect: untoggled-phase', 1, true) then
      expect_lnum = i - 1
      break
    end
  end
  if not expect_lnum then
    fail(fixture .. ' has no `# expect: untoggled-phase` line')
  end

  -- The fixture is edited in memory only: never write it back.
  vim.cmd.edit(vim.fn.fnameescape(fixture))
  local bufnr = vim.api.nvim_get_current_buf()
  vim.bo[bufnr].swapfile = false
  if vim.bo[bufnr].filetype ~= 'python' then
    fail('the fixture opened with filetype "' .. vim.bo[bufnr].filetype .. '", not python')
  end

  local client = wait_for('cute_lsp to attach to the fixture', function()
    return vim.lsp.get_clients({ bufnr = bufnr, name = 'cute_lsp' })[1]
  end)
  -- Neovim 0.11 pulls diagnostics but cannot be asked to pull again, so the
  -- server pushes to it (settings changes must show without an edit).
  local mode = client.server_capabilities.diagnosticProvider and 'pulled' or 'pushed'
  step('attached (' .. client.offset_encoding .. ' positions, diagnostics ' .. mode .. ')')

  local function cute001()
    for _, d in ipairs(vim.diagnostic.get(bufnr)) do
      if d.code == 'CUTE001' then
        return d
      end
    end
  end

  local diag = wait_for('a CUTE001 diagnostic', cute001)
  if diag.lnum ~= expect_lnum then
    fail(('CUTE001 is on line %d, expected line %d (the `# expect` marker)'):format(diag.lnum + 1, expect_lnum + 1))
  end
  local lsp_diag = diag.user_data and diag.user_data.lsp or {}
  local related = lsp_diag.relatedInformation or {}
  if #related == 0 then
    fail('CUTE001 carries no relatedInformation: ' .. vim.inspect(lsp_diag))
  end
  for _, r in ipairs(related) do
    if vim.uri_to_fname(r.location.uri) ~= vim.api.nvim_buf_get_name(bufnr) or (r.message or '') == '' then
      fail('malformed related information: ' .. vim.inspect(r))
    end
  end
  step(('CUTE001 on line %d with %d related steps'):format(diag.lnum + 1, #related))

  -- Settings as a user changes them at run time: the severity follows
  -- without an edit, and back.
  local function set_severity(level)
    client.settings = { ['cute-lsp'] = { severity = { ['untoggled-phase'] = level } } }
    client:notify('workspace/didChangeConfiguration', { settings = client.settings })
  end
  set_severity('warning')
  wait_for('CUTE001 to turn into a warning after a settings change', function()
    local d = cute001()
    return d and d.severity == vim.diagnostic.severity.WARN
  end)
  set_severity('error')
  diag = wait_for('CUTE001 to turn back into an error', function()
    local d = cute001()
    return d and d.severity == vim.diagnostic.severity.ERROR and d
  end)
  lsp_diag = diag.user_data.lsp
  step('settings: severity follows workspace/didChangeConfiguration')

  -- Hover on the wait shows its barrier's protocol, with the constant parity.
  local hover = client:request_sync('textDocument/hover', {
    textDocument = { uri = vim.uri_from_bufnr(bufnr) },
    position = lsp_diag.range.start,
  }, TIMEOUT_MS, bufnr)
  local contents = hover and hover.result and hover.result.contents or {}
  if not (contents.value or ''):find('parity 0 every time', 1, true) then
    fail('the hover on the wait does not show its parities: ' .. vim.inspect(hover))
  end
  step('hover: ' .. vim.split(contents.value, '\n')[1])

  -- What the server offers for the diagnostic, for a clear failure message.
  local params = {
    textDocument = { uri = vim.uri_from_bufnr(bufnr) },
    range = lsp_diag.range,
    context = { diagnostics = { lsp_diag }, only = { 'quickfix' } },
  }
  local response = client:request_sync('textDocument/codeAction', params, TIMEOUT_MS, bufnr)
  if not response or response.err then
    fail('textDocument/codeAction failed: ' .. vim.inspect(response))
  end
  local preferred
  for _, action in ipairs(response.result or {}) do
    if action.isPreferred then
      preferred = action
    end
  end
  if not preferred then
    fail('no preferred quick fix among ' .. vim.inspect(response.result))
  end
  step('preferred fix: ' .. preferred.title)

  -- Apply it as a user would: cursor on the diagnostic, code action filtered
  -- to the preferred one, applied without a prompt.
  vim.api.nvim_win_set_cursor(0, { diag.lnum + 1, diag.col })
  local tick = vim.api.nvim_buf_get_changedtick(bufnr)
  vim.lsp.buf.code_action({
    context = { only = { 'quickfix' } },
    filter = function(action)
      return action.isPreferred == true
    end,
    apply = true,
  })
  wait_for('the quick fix to edit the buffer', function()
    return vim.api.nvim_buf_get_changedtick(bufnr) ~= tick
  end)
  local flips = table.concat(vim.api.nvim_buf_get_lines(bufnr, 0, -1, false), '\n'):find('^= 1', 1, true)
  if not flips then
    fail('the fixed buffer does not flip a parity:\n' .. table.concat(vim.api.nvim_buf_get_lines(bufnr, 0, -1, false), '\n'))
  end

  wait_for('CUTE001 to disappear after the fix', function()
    return cute001() == nil and #vim.lsp.get_clients({ bufnr = bufnr, name = 'cute_lsp' }) == 1
  end)
  -- And stay gone: no late publish for an older version brings it back.
  vim.wait(500)
  if cute001() then
    fail('CUTE001 came back after the fix')
  end
  step('CUTE001 gone after the fix')

  -- A clean shutdown: the server must answer `shutdown` and exit.
  client:stop()
  wait_for('the server to shut down', function()
    return client:is_stopped()
  end)
end, debug.traceback)

if not ok then
  fail(tostring(err))
end
io.stdout:write('nvim: 1 passed, 0 failed\n')
os.exit(0)

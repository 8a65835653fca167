-- cute-lsp for Neovim 0.11+: put this directory on 'runtimepath' (or copy
-- this file to ~/.config/nvim/lsp/cute_lsp.lua) and call
--   vim.lsp.enable('cute_lsp')
-- Settings (the keys of [tool.cute-lsp] in pyproject.toml, which they
-- override) go under the `cute-lsp` section, for example:
--   vim.lsp.config('cute_lsp', { settings = { ['cute-lsp'] = { ignore = { 'deadlock' } } } })
return {
  cmd = { 'cute-lsp', '--stdio' },
  filetypes = { 'python' },
  root_markers = { 'pyproject.toml', 'setup.py', '.git' },
  capabilities = {
    general = { positionEncodings = { 'utf-8', 'utf-16' } },
  },
}

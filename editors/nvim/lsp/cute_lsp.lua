-- cute-lsp for Neovim 0.11+: put this directory on 'runtimepath' (or copy
-- this file to ~/.config/nvim/lsp/cute_lsp.lua) and call
--   vim.lsp.enable('cute_lsp')
return {
  cmd = { 'cute-lsp', '--stdio' },
  filetypes = { 'python' },
  root_markers = { 'pyproject.toml', 'setup.py', '.git' },
  capabilities = {
    general = { positionEncodings = { 'utf-8', 'utf-16' } },
  },
}

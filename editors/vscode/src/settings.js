// @ts-check
// The parts of the extension that do not need VS Code: where the server
// binary is and what the `cute-lsp.*` settings mean to the server. Kept apart
// from extension.js so that plain `node --test` can check them.
'use strict';

const path = require('node:path');

/** The language the server is started for. */
const DOCUMENT_SELECTOR = [
  { scheme: 'file', language: 'python' },
  { scheme: 'untitled', language: 'python' },
];

/** The settings section the client sends in `workspace/didChangeConfiguration`. */
const SECTION = 'cute-lsp';

/**
 * The command that runs the server, from the `cute-lsp.path` setting.
 *
 * A bare name (`cute-lsp`) is looked up on PATH when spawned; `~/` is the
 * home directory; `${workspaceFolder}` is replaced; any other relative path
 * is taken from the first workspace folder (so `target/release/cute-lsp`
 * works in a checkout), or left as it is without one. The `--stdio` argument
 * is not part of it: the language client adds it for the stdio transport.
 *
 * @param {string | undefined} setting
 * @param {{ workspaceFolder?: string, home?: string }} [context]
 * @returns {string}
 */
function serverCommand(setting, context = {}) {
  let command = (setting || '').trim() || 'cute-lsp';
  const folder = context.workspaceFolder;
  if (folder !== undefined) {
    command = command.split('${workspaceFolder}').join(folder);
  }
  if (command === '~' || command.startsWith('~/')) {
    command = path.join(context.home || require('node:os').homedir(), command.slice(1));
  }
  const bare = !command.includes('/') && !command.includes('\\');
  if (bare || path.isAbsolute(command) || folder === undefined) {
    return command;
  }
  return path.join(folder, command);
}

/**
 * What the server reads of the settings, as sent in `initializationOptions`.
 * The server takes the same keys from `workspace/didChangeConfiguration`
 * under `cute-lsp`; only `rules` is set from VS Code's UI, the other keys
 * (`ignore`, `severity`, `max-states`, `max-time-ms`) pass through.
 *
 * @param {Record<string, unknown> | undefined} settings the `cute-lsp` section
 * @returns {Record<string, unknown>}
 */
function serverSettings(settings) {
  /** @type {Record<string, unknown>} */
  const out = {};
  if (!settings) {
    return out;
  }
  const rules = settings.rules;
  if (rules && typeof rules === 'object' && !Array.isArray(rules)) {
    /** @type {Record<string, boolean>} */
    const on = {};
    for (const [name, enabled] of Object.entries(rules)) {
      if (typeof enabled === 'boolean') {
        on[name] = enabled;
      }
    }
    out.rules = on;
  }
  for (const key of ['ignore', 'severity', 'max-states', 'max-time-ms']) {
    if (settings[key] !== undefined && settings[key] !== null) {
      out[key] = settings[key];
    }
  }
  return out;
}

module.exports = { DOCUMENT_SELECTOR, SECTION, serverCommand, serverSettings };

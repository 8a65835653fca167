// @ts-check
// VS Code client for cute-lsp: starts `cute-lsp --stdio` for Python files and
// forwards the `cute-lsp.*` settings. Diagnostics (with the counterexample as
// related information), quick fixes and hovers come from the server. A
// diagnostic with a counterexample also offers "Show the interleaving",
// which opens the picture `cute-lsp trace` draws in a webview.
'use strict';

const path = require('node:path');
const vscode = require('vscode');
const { LanguageClient, TransportKind } = require('vscode-languageclient/node');
const { SHOW_INTERLEAVING, traceHtml, webviewHtml } = require('./interleaving');
const { DOCUMENT_SELECTOR, SECTION, serverCommand, serverSettings } = require('./settings');

/** @type {LanguageClient | undefined} */
let client;

/** The binary the `cute-lsp.path` setting names. */
function binary() {
  const folder = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
  return serverCommand(vscode.workspace.getConfiguration(SECTION).get('path'), { workspaceFolder: folder });
}

/**
 * Opens the interleaving of the finding at `file:line` beside the editor.
 * The file is checked as saved: with unsaved changes, the picture may be
 * that of an older text, and a warning says so.
 *
 * @param {string} file
 * @param {number} line from 1
 * @returns {Promise<vscode.WebviewPanel | undefined>}
 */
async function showInterleaving(file, line) {
  const open = vscode.workspace.textDocuments.find((d) => d.uri.fsPath === file);
  if (open?.isDirty) {
    vscode.window.showWarningMessage('cute-lsp: the interleaving shown is that of the file as saved.');
  }
  let page;
  try {
    page = await traceHtml(binary(), file, line);
  } catch (err) {
    vscode.window.showErrorMessage(`cute-lsp: cannot show the interleaving: ${err instanceof Error ? err.message : err}`);
    return undefined;
  }
  const panel = vscode.window.createWebviewPanel(
    'cute-lsp.interleaving',
    `Interleaving: ${path.basename(file)}:${line}`,
    vscode.ViewColumn.Beside,
    { enableScripts: false },
  );
  panel.webview.html = webviewHtml(page);
  return panel;
}

/** @returns {LanguageClient} */
function createClient() {
  const config = vscode.workspace.getConfiguration(SECTION);
  const folder = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
  const command = serverCommand(config.get('path'), { workspaceFolder: folder });
  /** @type {import('vscode-languageclient/node').ServerOptions} */
  const serverOptions = {
    run: { command, transport: TransportKind.stdio },
    debug: { command, transport: TransportKind.stdio, options: { env: { ...process.env, RUST_BACKTRACE: '1' } } },
  };
  /** @type {import('vscode-languageclient/node').LanguageClientOptions} */
  const clientOptions = {
    documentSelector: DOCUMENT_SELECTOR,
    // Sends the section once at start and again on every change.
    synchronize: {
      configurationSection: SECTION,
      fileEvents: vscode.workspace.createFileSystemWatcher('**/pyproject.toml'),
    },
    initializationOptions: serverSettings(/** @type {any} */ (config)),
  };
  return new LanguageClient('cute-lsp', 'cute-lsp', serverOptions, clientOptions);
}

async function start() {
  client = createClient();
  try {
    await client.start();
  } catch (err) {
    const command = serverCommand(vscode.workspace.getConfiguration(SECTION).get('path'));
    vscode.window.showErrorMessage(
      `cute-lsp: could not start \`${command} --stdio\` (${err}). Set "cute-lsp.path" to the cute-lsp binary.`,
    );
  }
}

async function stop() {
  const running = client;
  client = undefined;
  if (running) {
    await running.stop().catch(() => undefined);
  }
}

/** @param {vscode.ExtensionContext} context */
async function activate(context) {
  context.subscriptions.push(
    vscode.commands.registerCommand('cute-lsp.restart', async () => {
      await stop();
      await start();
    }),
    vscode.commands.registerCommand(SHOW_INTERLEAVING, showInterleaving),
    // The binary is only read at start; the other settings reach the running
    // server through workspace/didChangeConfiguration.
    vscode.workspace.onDidChangeConfiguration(async (event) => {
      if (event.affectsConfiguration(`${SECTION}.path`)) {
        await stop();
        await start();
      }
    }),
  );
  await start();
}

function deactivate() {
  return stop();
}

module.exports = { activate, deactivate };

'use strict';

// extension.js against stand-ins for the `vscode` module and the language
// client: what it starts, with which options, and when it restarts; and
// "Show the interleaving", which runs the real binary's `trace` and opens
// its page in a (stand-in) webview.

const { test } = require('node:test');
const assert = require('node:assert/strict');
const Module = require('node:module');
const fs = require('node:fs');
const path = require('node:path');

const { ROOT, binary } = require('./support');

const TransportKind = { stdio: 0, ipc: 1, pipe: 2, socket: 3 };

function loadExtension(settings, { textDocuments = [] } = {}) {
  const clients = [];
  const listeners = [];
  const commands = new Map();
  const errors = [];
  const warnings = [];
  const panels = [];
  const vscode = {
    ViewColumn: { Active: -1, Beside: -2 },
    workspace: {
      textDocuments,
      workspaceFolders: [{ uri: { fsPath: '/ws' } }],
      getConfiguration: (section) => {
        assert.equal(section, 'cute-lsp');
        return { ...settings, get: (key) => settings[key] };
      },
      createFileSystemWatcher: (glob) => ({ glob }),
      onDidChangeConfiguration: (listener) => {
        listeners.push(listener);
        return { dispose() {} };
      },
    },
    commands: {
      registerCommand: (name, fn) => {
        commands.set(name, fn);
        return { dispose() {} };
      },
    },
    window: {
      showErrorMessage: (message) => errors.push(message),
      showWarningMessage: (message) => warnings.push(message),
      createWebviewPanel: (viewType, title, column, options) => {
        const panel = { viewType, title, column, options, webview: { html: '' } };
        panels.push(panel);
        return panel;
      },
    },
  };
  class LanguageClient {
    constructor(id, name, serverOptions, clientOptions) {
      Object.assign(this, { id, name, serverOptions, clientOptions, started: false, stopped: false });
      clients.push(this);
    }
    async start() {
      this.started = true;
    }
    async stop() {
      this.stopped = true;
    }
  }
  const stubs = { vscode, 'vscode-languageclient/node': { LanguageClient, TransportKind } };
  const extensionPath = require.resolve('../src/extension');
  delete require.cache[extensionPath];
  const load = Module._load;
  Module._load = function (request, parent, isMain) {
    return request in stubs ? stubs[request] : load.call(this, request, parent, isMain);
  };
  try {
    return { extension: require(extensionPath), clients, listeners, commands, errors, warnings, panels };
  } finally {
    Module._load = load;
  }
}

const context = () => ({ subscriptions: [] });

test('activation starts cute-lsp over stdio for Python with the settings section', async () => {
  const { extension, clients, errors } = loadExtension({ path: 'target/release/cute-lsp', rules: { deadlock: false } });
  await extension.activate(context());
  assert.equal(clients.length, 1);
  const [client] = clients;
  assert.ok(client.started);
  assert.deepEqual(errors, []);
  const command = path.join('/ws', 'target/release/cute-lsp');
  assert.deepEqual(client.serverOptions.run, { command, transport: TransportKind.stdio });
  assert.equal(client.serverOptions.debug.command, command);
  // The client appends --stdio itself; the extension must not add it twice.
  assert.equal(client.serverOptions.run.args, undefined);
  assert.deepEqual(
    client.clientOptions.documentSelector.map((s) => s.language),
    ['python', 'python'],
  );
  assert.equal(client.clientOptions.synchronize.configurationSection, 'cute-lsp');
  assert.equal(client.clientOptions.synchronize.fileEvents.glob, '**/pyproject.toml');
  assert.deepEqual(client.clientOptions.initializationOptions, { rules: { deadlock: false } });
  await extension.deactivate();
  assert.ok(client.stopped);
});

test('a new binary path restarts the server; other settings do not', async () => {
  const { extension, clients, listeners, commands } = loadExtension({ path: 'cute-lsp' });
  await extension.activate(context());
  const affects = (key) => ({ affectsConfiguration: (k) => k === key || key.startsWith(`${k}.`) });
  for (const listener of listeners) {
    await listener(affects('cute-lsp.rules'));
  }
  assert.equal(clients.length, 1);
  for (const listener of listeners) {
    await listener(affects('cute-lsp.path'));
  }
  assert.equal(clients.length, 2);
  assert.ok(clients[0].stopped && clients[1].started);
  await commands.get('cute-lsp.restart')();
  assert.equal(clients.length, 3);
  assert.ok(clients[1].stopped && clients[2].started);
  await extension.deactivate();
});

const FIXTURE = path.join(ROOT, 'tests', 'fixtures', 'untoggled_phase', 'jacobi_cluster_bug.py');

/** The line, from 1, of the fixture's untoggled-phase finding. */
function findingLine() {
  const lines = fs.readFileSync(FIXTURE, 'utf8').split('\n');
  return lines.findIndex((l) => l.includes('# expect: untoggled-phase')) + 1;
}

test('"Show the interleaving" opens the page `cute-lsp trace` draws, in a webview with no script', { timeout: 60000 }, async () => {
  const { extension, commands, errors, warnings, panels } = loadExtension({ path: binary() });
  await extension.activate(context());
  const show = commands.get('cute-lsp.showInterleaving');
  assert.ok(show, 'the command the server\'s code action names is registered');
  const line = findingLine();
  const panel = await show(FIXTURE, line);
  assert.deepEqual(errors, []);
  assert.deepEqual(warnings, []);
  assert.equal(panels.length, 1);
  assert.equal(panel, panels[0]);
  assert.equal(panel.viewType, 'cute-lsp.interleaving');
  assert.equal(panel.title, `Interleaving: jacobi_cluster_bug.py:${line}`);
  assert.equal(panel.column, -2, 'beside the editor');
  assert.equal(panel.options.enableScripts, false);
  const html = panel.webview.html;
  assert.match(html, /<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">/);
  assert.match(html, /<svg [^>]*class="trace"/);
  assert.match(html, /<g class="lane" data-lane="warps 1\.\.3 of CTA 0"/);
  assert.match(html, new RegExp(`<g class="stuck" data-line="${line}"`));
  assert.ok(!html.includes('<script'));
  await extension.deactivate();
});

test('"Show the interleaving" says why when there is nothing to draw, and warns about unsaved changes', { timeout: 60000 }, async () => {
  const textDocuments = [{ uri: { fsPath: FIXTURE }, isDirty: true }];
  const { extension, commands, errors, warnings, panels } = loadExtension({ path: binary() }, { textDocuments });
  await extension.activate(context());
  assert.equal(await commands.get('cute-lsp.showInterleaving')(FIXTURE, 1), undefined);
  assert.equal(panels.length, 0);
  assert.equal(errors.length, 1);
  assert.match(errors[0], /^cute-lsp: cannot show the interleaving: no finding starts on line 1 of `.*jacobi_cluster_bug\.py`; findings with a trace start on line \d+ \(untoggled-phase\)$/);
  assert.deepEqual(warnings, ['cute-lsp: the interleaving shown is that of the file as saved.']);
  await extension.deactivate();
});

'use strict';

// extension.js against stand-ins for the `vscode` module and the language
// client: what it starts, with which options, and when it restarts.

const { test } = require('node:test');
const assert = require('node:assert/strict');
const Module = require('node:module');
const path = require('node:path');

const TransportKind = { stdio: 0, ipc: 1, pipe: 2, socket: 3 };

function loadExtension(settings) {
  const clients = [];
  const listeners = [];
  const commands = new Map();
  const errors = [];
  const vscode = {
    workspace: {
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
    window: { showErrorMessage: (message) => errors.push(message) },
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
    return { extension: require(extensionPath), clients, listeners, commands, errors };
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

'use strict';

// Starts the real server the way the extension does (the command from
// `serverCommand`, plus the `--stdio` that TransportKind.stdio appends) and
// talks to it through the protocol layer vscode-languageclient is built on.

const cp = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const { pathToFileURL } = require('node:url');

const {
  createProtocolConnection,
  StreamMessageReader,
  StreamMessageWriter,
  InitializeRequest,
  InitializedNotification,
  ShutdownRequest,
  ExitNotification,
  PublishDiagnosticsNotification,
} = require('vscode-languageserver-protocol/node');

const { serverCommand } = require('../src/settings');

const ROOT = path.resolve(__dirname, '..', '..', '..');
/** How long any one wait may take before the test fails. */
const TIMEOUT_MS = Number(process.env.CUTE_LSP_TEST_TIMEOUT_MS) || 30000;

function binary() {
  const setting = process.env.CUTE_LSP_BINARY || 'target/release/cute-lsp';
  const command = serverCommand(setting, { workspaceFolder: ROOT });
  if (!fs.existsSync(command)) {
    throw new Error(`${command} does not exist; build it with \`cargo build --release -p cute-lsp\` or set CUTE_LSP_BINARY`);
  }
  return command;
}

function fileUri(file) {
  return pathToFileURL(file).href;
}

/** Client capabilities as VS Code 1.8x sends them, in the parts the server reads. */
function vscodeCapabilities({ pull }) {
  const textDocument = {
    synchronization: { dynamicRegistration: true, didSave: true },
    publishDiagnostics: { relatedInformation: true, versionSupport: false, codeDescriptionSupport: true, dataSupport: true },
    codeAction: {
      dynamicRegistration: true,
      isPreferredSupport: true,
      codeActionLiteralSupport: { codeActionKind: { valueSet: ['', 'quickfix', 'refactor', 'source'] } },
    },
    hover: { dynamicRegistration: true, contentFormat: ['markdown', 'plaintext'] },
  };
  if (pull) {
    textDocument.diagnostic = { dynamicRegistration: true, relatedDocumentSupport: false };
  }
  return {
    general: { positionEncodings: ['utf-16'] },
    workspace: {
      configuration: true,
      didChangeConfiguration: { dynamicRegistration: true },
      didChangeWatchedFiles: { dynamicRegistration: true },
      ...(pull ? { diagnostics: { refreshSupport: true } } : {}),
    },
    textDocument,
  };
}

/**
 * A running server and a connection to it. Server-to-client requests
 * (registrations, configuration, refreshes) are answered like VS Code does;
 * every notification is recorded so a test can wait for one.
 */
class Session {
  constructor({ args = [], cwd = ROOT, onConfiguration } = {}) {
    this.stderr = '';
    this.proc = cp.spawn(binary(), [...args, '--stdio'], { cwd, stdio: ['pipe', 'pipe', 'pipe'] });
    this.proc.stderr.on('data', (chunk) => {
      this.stderr += chunk.toString();
    });
    this.exited = new Promise((resolve) => this.proc.on('exit', (code, signal) => resolve({ code, signal })));
    this.connection = createProtocolConnection(
      new StreamMessageReader(this.proc.stdout),
      new StreamMessageWriter(this.proc.stdin),
    );
    /** @type {{ method: string, params: any }[]} */
    this.notifications = [];
    /** @type {{ method: string, params: any }[]} */
    this.requests = [];
    this.waiters = [];
    this.connection.onNotification((method, params) => {
      this.notifications.push({ method, params });
      this.wake();
    });
    this.connection.onRequest((method, params) => {
      this.requests.push({ method, params });
      this.wake();
      if (method === 'workspace/configuration') {
        return (params.items || []).map((item) => (onConfiguration ? onConfiguration(item) : null));
      }
      return null;
    });
    this.connection.listen();
  }

  wake() {
    for (const waiter of this.waiters.slice()) {
      waiter();
    }
  }

  /** Resolves with the first value `find()` returns that is not undefined. */
  waitFor(what, find) {
    return new Promise((resolve, reject) => {
      const check = () => {
        const found = find();
        if (found !== undefined) {
          done();
          resolve(found);
        }
      };
      const timer = setTimeout(() => {
        done();
        reject(new Error(`timed out after ${TIMEOUT_MS} ms waiting for ${what}; server stderr:\n${this.stderr}`));
      }, TIMEOUT_MS);
      const done = () => {
        clearTimeout(timer);
        this.waiters = this.waiters.filter((w) => w !== check);
      };
      this.waiters.push(check);
      check();
    });
  }

  /** The first publishDiagnostics for `uri` that satisfies `pred`, removed from the record. */
  waitPublish(uri, pred = () => true) {
    return this.waitFor(`publishDiagnostics for ${uri}`, () => {
      const i = this.notifications.findIndex(
        (n) => n.method === PublishDiagnosticsNotification.type.method && n.params.uri === uri && pred(n.params),
      );
      return i < 0 ? undefined : this.notifications.splice(i, 1)[0].params;
    });
  }

  async initialize(capabilities, initializationOptions) {
    const result = await this.request(InitializeRequest.type, {
      processId: process.pid,
      clientInfo: { name: 'Visual Studio Code', version: '1.82.0' },
      rootUri: fileUri(ROOT),
      workspaceFolders: [{ uri: fileUri(ROOT), name: path.basename(ROOT) }],
      capabilities,
      initializationOptions,
    });
    this.connection.sendNotification(InitializedNotification.type, {});
    return result;
  }

  /** A request that fails the test instead of hanging it. */
  request(type, params) {
    let timer;
    const timeout = new Promise((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`no answer to ${type.method || type} within ${TIMEOUT_MS} ms; server stderr:\n${this.stderr}`)),
        TIMEOUT_MS,
      );
    });
    return Promise.race([this.connection.sendRequest(type, params), timeout]).finally(() => clearTimeout(timer));
  }

  notify(type, params) {
    return this.connection.sendNotification(type, params);
  }

  /** shutdown, exit; resolves with the exit code. */
  async shutdown() {
    await this.request(ShutdownRequest.type, undefined);
    await this.connection.sendNotification(ExitNotification.type);
    let timer;
    const status = await Promise.race([
      this.exited,
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error('the server did not exit after `exit`')), TIMEOUT_MS);
      }),
    ]).finally(() => clearTimeout(timer));
    this.connection.dispose();
    return status.code;
  }

  kill() {
    if (this.proc.exitCode === null && this.proc.signalCode === null) {
      this.proc.kill();
    }
    this.connection.dispose();
  }
}

/** UTF-16 offset of an LSP position in `text` (JavaScript strings are UTF-16). */
function offsetAt(text, position) {
  let start = 0;
  for (let line = 0; line < position.line; line++) {
    const next = text.indexOf('\n', start);
    if (next < 0) {
      return text.length;
    }
    start = next + 1;
  }
  let end = text.indexOf('\n', start);
  if (end < 0) {
    end = text.length;
  }
  if (end > start && text[end - 1] === '\r') {
    end--;
  }
  return Math.min(start + position.character, end);
}

/** Applies TextEdits that all refer to the original text, as VS Code does. */
function applyEdits(text, edits) {
  const spans = edits
    .map((e, i) => ({ start: offsetAt(text, e.range.start), end: offsetAt(text, e.range.end), text: e.newText, i }))
    .sort((a, b) => a.start - b.start || a.i - b.i);
  let out = '';
  let at = 0;
  for (const span of spans) {
    if (span.start < at) {
      throw new Error(`overlapping edits: ${JSON.stringify(edits)}`);
    }
    out += text.slice(at, span.start) + span.text;
    at = span.end;
  }
  return out + text.slice(at);
}

/**
 * The same edits as incremental `didChange` content changes, last position
 * first, so each range is still valid on the text the previous one left:
 * what VS Code sends after applying a workspace edit.
 */
function asContentChanges(edits) {
  return edits
    .map((e, i) => ({ e, i }))
    .sort(
      (a, b) =>
        b.e.range.start.line - a.e.range.start.line ||
        b.e.range.start.character - a.e.range.start.character ||
        b.i - a.i,
    )
    .map(({ e }) => ({ range: e.range, text: e.newText }));
}

module.exports = { ROOT, TIMEOUT_MS, Session, binary, applyEdits, asContentChanges, fileUri, vscodeCapabilities };

'use strict';

// The extension's server round trip, with the messages VS Code sends: the
// untoggled-phase bug fixture gets its CUTE001 diagnostic with the trace as
// related information and "Show the interleaving" among its code actions,
// the preferred quick fix is applied as incremental edits, and the
// diagnostic goes away.

const { test } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');

const {
  CodeActionRequest,
  DidChangeConfigurationNotification,
  DidOpenTextDocumentNotification,
  DidChangeTextDocumentNotification,
  DocumentDiagnosticRequest,
  HoverRequest,
} = require('vscode-languageserver-protocol/node');

const { SHOW_INTERLEAVING, traceHtml } = require('../src/interleaving');
const { serverSettings } = require('../src/settings');
const { ROOT, Session, applyEdits, asContentChanges, binary, fileUri, vscodeCapabilities } = require('./support');

const FIXTURE = path.join(ROOT, 'tests', 'fixtures', 'untoggled_phase', 'jacobi_cluster_bug.py');

function fixture() {
  const text = fs.readFileSync(FIXTURE, 'utf8');
  const line = text.split('\n').findIndex((l) => l.includes('# expect: untoggled-phase'));
  assert.ok(line >= 0, `${FIXTURE} has no \`# expect: untoggled-phase\` line`);
  return { text, uri: fileUri(FIXTURE), line };
}

/**
 * The document's diagnostics as the client gets them: the next push for
 * `version`, or a pull (VS Code 1.82+ pulls when the server offers it).
 */
async function diagnosticsOf(session, uri, { pull, version, previousResultId }) {
  if (!pull) {
    return { items: (await session.waitPublish(uri, (p) => p.version === version)).diagnostics };
  }
  const report = await session.request(DocumentDiagnosticRequest.type, { textDocument: { uri }, previousResultId });
  assert.equal(report.kind, 'full', `expected a full report: ${JSON.stringify(report)}`);
  return report;
}

for (const pull of [false, true]) {
  const mode = pull ? 'pulled' : 'pushed';
  test(`untoggled-phase (${mode}): diagnostic with its trace, preferred quick fix, diagnostic gone`, { timeout: 120000 }, async (t) => {
    const session = new Session();
    t.after(() => session.kill());
    const init = await session.initialize(vscodeCapabilities({ pull }));
    assert.equal(init.serverInfo.name, 'cute-lsp');
    assert.equal(init.capabilities.positionEncoding ?? 'utf-16', 'utf-16');
    assert.equal(Boolean(init.capabilities.diagnosticProvider), pull, 'pull diagnostics offered exactly when declared');

    const { text, uri, line } = fixture();
    session.notify(DidOpenTextDocumentNotification.type, { textDocument: { uri, languageId: 'python', version: 1, text } });
    const first = await diagnosticsOf(session, uri, { pull, version: 1 });
    const diagnostic = first.items.find((d) => d.code === 'CUTE001');
    assert.ok(diagnostic, `no CUTE001 in ${JSON.stringify(first, null, 1)}`);
    assert.equal(diagnostic.range.start.line, line, 'CUTE001 is not on the `# expect` line');
    assert.equal(diagnostic.source, 'cute-lsp');
    assert.ok(diagnostic.relatedInformation?.length > 0, `CUTE001 carries no relatedInformation: ${JSON.stringify(diagnostic)}`);
    for (const r of diagnostic.relatedInformation) {
      assert.equal(r.location.uri, uri);
      assert.ok(r.message.length > 0);
    }

    const hover = await session.request(HoverRequest.type, { textDocument: { uri }, position: diagnostic.range.start });
    assert.equal(hover.contents.kind, 'markdown');
    assert.match(hover.contents.value, /parity 0 every time/);

    const actions = await session.request(CodeActionRequest.type, {
      textDocument: { uri },
      range: diagnostic.range,
      context: { diagnostics: [diagnostic], only: ['quickfix'], triggerKind: 1 },
    });
    // The diagnostic has a counterexample: the client is offered its
    // picture, drawn by `cute-lsp trace` on the file and line it names.
    const show = (actions || []).find((a) => a.title === 'Show the interleaving');
    assert.ok(show, `no "Show the interleaving" among ${JSON.stringify(actions, null, 1)}`);
    assert.equal(show.command.command, SHOW_INTERLEAVING);
    assert.deepEqual(show.command.arguments, [FIXTURE, line + 1]);
    assert.equal(show.edit, undefined);
    const page = await traceHtml(binary(), ...show.command.arguments);
    assert.match(page, new RegExp(`<g class="stuck" data-line="${line + 1}"`));

    const fix = (actions || []).find((a) => a.isPreferred);
    assert.ok(fix, `no preferred quick fix among ${JSON.stringify(actions, null, 1)}`);
    assert.equal(fix.kind, 'quickfix');
    assert.ok(fix.diagnostics.some((d) => d.code === 'CUTE001'), 'the fix does not name its diagnostic');
    const edits = fix.edit.changes[uri];
    assert.ok(edits?.length > 0, `the fix has no edits for ${uri}`);
    const fixed = applyEdits(text, edits);
    assert.notEqual(fixed, text);

    session.notify(DidChangeTextDocumentNotification.type, {
      textDocument: { uri, version: 2 },
      contentChanges: asContentChanges(edits),
    });
    const after = await diagnosticsOf(session, uri, { pull, version: 2, previousResultId: first.resultId });
    assert.deepEqual(
      after.items.filter((d) => d.code === 'CUTE001'),
      [],
      `CUTE001 is still reported after the fix:\n${fixed}`,
    );
    assert.equal(await session.shutdown(), 0, 'the server exits 0 after shutdown and exit');
  });
}

test('the extension\'s settings reach the server: cute-lsp.rules at start and on change', { timeout: 120000 }, async (t) => {
  const session = new Session();
  t.after(() => session.kill());
  // What extension.js sends: initializationOptions, then the whole section
  // (VS Code includes the client-only keys) on every change.
  const section = { path: 'cute-lsp', rules: { 'untoggled-phase': false }, trace: { server: 'off' } };
  await session.initialize(vscodeCapabilities({ pull: true }), serverSettings(section));
  const { text, uri } = fixture();
  session.notify(DidOpenTextDocumentNotification.type, { textDocument: { uri, languageId: 'python', version: 1, text } });
  const off = await diagnosticsOf(session, uri, { pull: true });
  assert.deepEqual(off.items.filter((d) => d.code === 'CUTE001'), [], 'untoggled-phase is turned off');

  const refreshes = () => session.requests.filter((r) => r.method === 'workspace/diagnostic/refresh').length;
  session.notify(DidChangeConfigurationNotification.type, {
    settings: { 'cute-lsp': { ...section, rules: { 'untoggled-phase': true } } },
  });
  await session.waitFor('workspace/diagnostic/refresh', () => (refreshes() > 0 ? true : undefined));
  const on = await diagnosticsOf(session, uri, { pull: true, previousResultId: off.resultId });
  assert.ok(on.items.some((d) => d.code === 'CUTE001'), `untoggled-phase is back on: ${JSON.stringify(on.items)}`);
  assert.deepEqual(
    session.notifications.filter((n) => n.method === 'window/showMessage'),
    [],
    'VS Code\'s own keys in the section are not reported as problems',
  );
  assert.equal(await session.shutdown(), 0);
});

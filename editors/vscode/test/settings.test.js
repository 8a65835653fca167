'use strict';

const { test } = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');

const { serverCommand, serverSettings } = require('../src/settings');

test('the server command defaults to cute-lsp on PATH', () => {
  assert.equal(serverCommand(undefined), 'cute-lsp');
  assert.equal(serverCommand('  '), 'cute-lsp');
  assert.equal(serverCommand('cute-lsp', { workspaceFolder: '/ws' }), 'cute-lsp');
});

test('relative server paths resolve against the workspace folder', () => {
  const ws = path.resolve('/ws');
  assert.equal(serverCommand('target/release/cute-lsp', { workspaceFolder: ws }), path.join(ws, 'target/release/cute-lsp'));
  assert.equal(serverCommand('${workspaceFolder}/bin/cute-lsp', { workspaceFolder: ws }), path.join(ws, 'bin/cute-lsp'));
  assert.equal(serverCommand('/opt/cute-lsp', { workspaceFolder: ws }), '/opt/cute-lsp');
  assert.equal(serverCommand('~/bin/cute-lsp', { home: '/home/u' }), path.join('/home/u', 'bin/cute-lsp'));
  // Without a folder there is nothing to resolve against.
  assert.equal(serverCommand('target/release/cute-lsp'), 'target/release/cute-lsp');
});

test('settings pass rules and the server keys, nothing else', () => {
  assert.deepEqual(serverSettings(undefined), {});
  assert.deepEqual(
    serverSettings({
      path: '/opt/cute-lsp',
      rules: { deadlock: false, 'untoggled-phase': true, bogus: 'yes' },
      severity: { 'untoggled-phase': 'warning' },
      'max-states': 1000,
      'max-time-ms': null,
      trace: { server: 'off' },
    }),
    { rules: { deadlock: false, 'untoggled-phase': true }, severity: { 'untoggled-phase': 'warning' }, 'max-states': 1000 },
  );
  assert.deepEqual(serverSettings({ rules: ['deadlock'] }), {});
});

test('package.json offers every rule the server has, by name and code', () => {
  const { execFileSync } = require('node:child_process');
  const { binary } = require('./support');
  const rules = execFileSync(binary(), ['rules'], { encoding: 'utf8' })
    .trim()
    .split('\n')
    .map((line) => {
      const [, code, name] = line.match(/^(\S+)\s+(\S+)\s/);
      return [name, code];
    });
  const manifest = require('../package.json');
  const offered = manifest.contributes.configuration.properties['cute-lsp.rules'].properties;
  assert.deepEqual(
    Object.entries(offered).map(([name, p]) => [name, p.description.split(':')[0]]),
    rules,
    'a rule was added or renamed: update contributes.configuration "cute-lsp.rules" in editors/vscode/package.json (see `cute-lsp rules`)',
  );
});

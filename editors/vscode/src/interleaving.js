// @ts-check
// "Show the interleaving": the server offers it as a code action on a
// diagnostic that carries a counterexample, with the file and the line the
// finding starts on; this runs `cute-lsp trace FILE:LINE`, which checks the
// file as saved and prints the picture as a page, and makes that page safe
// for a webview. Kept apart from extension.js so that plain `node --test`
// can check it.
'use strict';

const cp = require('node:child_process');

/** The command the server's code action names (server/actions.rs). */
const SHOW_INTERLEAVING = 'cute-lsp.showInterleaving';

/** A trace page is a few hundred kilobytes at most; this is far above. */
const MAX_BUFFER = 64 * 1024 * 1024;

/**
 * The page `cute-lsp trace` prints for the finding at `file:line`; rejects
 * with the command's own message when it fails.
 *
 * @param {string} binary the cute-lsp binary
 * @param {string} file
 * @param {number} line from 1
 * @returns {Promise<string>}
 */
function traceHtml(binary, file, line) {
  return new Promise((resolve, reject) => {
    cp.execFile(binary, ['trace', `${file}:${line}`], { maxBuffer: MAX_BUFFER, encoding: 'utf8' }, (err, stdout, stderr) => {
      if (err) {
        const said = String(stderr || '').trim().replace(/^cute-lsp: /, '');
        reject(new Error(said || err.message));
      } else {
        resolve(stdout);
      }
    });
  });
}

/**
 * The page with a Content-Security-Policy that allows nothing but its own
 * inline style: it has no script and loads nothing, and the webview is told
 * so.
 *
 * @param {string} page
 * @returns {string}
 */
function webviewHtml(page) {
  const policy = `<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">`;
  return page.includes('<head>') ? page.replace('<head>', `<head>\n${policy}`) : `${policy}\n${page}`;
}

module.exports = { SHOW_INTERLEAVING, traceHtml, webviewHtml };

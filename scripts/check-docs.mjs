#!/usr/bin/env node
// Checks that every link and cited path in floe's docs exists.
//
//   node scripts/check-docs.mjs [REPO_ROOT]        (default: the current directory)
//
// Scans README.md, docs/*.md, bench/README.md, examples/README.md, tests/**/README.md and
// src/**/README.md for
//   (a) relative markdown links [text](path#anchor): the file or directory must exist, and an
//       anchor on a .md target (or a bare #anchor) must be the GitHub slug of one of its headings;
//   (b) repository paths in backticks (`src/floe/io/file.h`, `tests/integration/x.test.mjs`):
//       the file or directory must exist.
// Fenced code blocks are skipped (they show commands and layouts, not references).
// Prints each broken reference as `file:line: reference (why)` and exits 1; exits 0 when all
// resolve. No npm dependencies. Registered with CTest as `docs_links`.

import fs from 'node:fs';
import path from 'node:path';

const root = path.resolve(process.argv[2] || '.');

// ---- which files ---------------------------------------------------------------------------

const SKIP_DIRS = new Set(['node_modules', '.git', 'build', 'test-artifacts']);

// Every README.md under `dir` (relative to root), recursively.
function readmesUnder(dir) {
  const out = [];
  const walk = (rel) => {
    let entries;
    try {
      entries = fs.readdirSync(path.join(root, rel), { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      const child = path.posix.join(rel, e.name);
      if (e.isDirectory()) {
        if (!SKIP_DIRS.has(e.name) && !e.name.startsWith('build')) walk(child);
      } else if (e.name === 'README.md') {
        out.push(child);
      }
    }
  };
  walk(dir);
  return out;
}

function docFiles() {
  const files = ['README.md', 'bench/README.md', 'examples/README.md'];
  try {
    for (const f of fs.readdirSync(path.join(root, 'docs'))) {
      if (f.endsWith('.md')) files.push(`docs/${f}`);
    }
  } catch {
    // no docs/ directory: nothing to add
  }
  files.push(...readmesUnder('tests'), ...readmesUnder('src'));
  return [...new Set(files)].filter((f) => fs.existsSync(path.join(root, f))).sort();
}

// ---- markdown structure --------------------------------------------------------------------

// The lines of `text` with fenced code blocks blanked (line numbers kept).
function proseLines(text) {
  const lines = text.split('\n');
  let fence = null;  // the opening fence while inside a block
  return lines.map((line) => {
    const m = /^\s{0,3}(`{3,}|~{3,})/.exec(line);
    if (fence) {
      if (m && m[1][0] === fence[0] && m[1].length >= fence.length) fence = null;
      return '';
    }
    if (m) {
      fence = m[1];
      return '';
    }
    return line;
  });
}

// GitHub's heading anchor: the rendered text lower-cased, everything but letters, digits,
// marks, '_', '-' and spaces dropped, spaces turned into '-'; repeats get -1, -2, ...
function slug(heading) {
  const text = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')  // links and images: their text
    .replace(/<[^>]+>/g, '')                     // inline HTML
    .replace(/[`*]/g, '')                        // code and emphasis markers
    .trim()
    .toLowerCase();
  return text.replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '').replace(/ /g, '-');
}

const anchorCache = new Map();
// The anchors a markdown file defines: heading slugs (with GitHub's -N for repeats) and
// explicit <a name="..."> / id="..." anchors.
function anchorsOf(file) {
  if (anchorCache.has(file)) return anchorCache.get(file);
  const anchors = new Set();
  const seen = new Map();
  const text = fs.readFileSync(file, 'utf8');
  for (const line of proseLines(text)) {
    const h = /^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (h) {
      const base = slug(h[1]);
      const n = seen.get(base) || 0;
      seen.set(base, n + 1);
      anchors.add(n === 0 ? base : `${base}-${n}`);
    }
    for (const m of line.matchAll(/<a\s+(?:name|id)="([^"]+)"/g)) anchors.add(m[1]);
  }
  anchorCache.set(file, anchors);
  return anchors;
}

// ---- (a) markdown links --------------------------------------------------------------------

function checkLink(docRel, target) {
  if (/^[a-z][a-z0-9+.-]*:/i.test(target)) return null;  // http:, https:, mailto:, file:
  let [file, anchor] = target.split('#', 2);
  try {
    file = decodeURI(file);
  } catch {
    return 'not a valid URI';
  }
  const docDir = path.dirname(path.join(root, docRel));
  const abs = file === '' ? path.join(root, docRel)
    : file.startsWith('/') ? path.join(root, file) : path.resolve(docDir, file);
  if (!abs.startsWith(root)) return 'points outside the repository';
  if (!fs.existsSync(abs)) return 'no such file or directory';
  if (anchor !== undefined && abs.endsWith('.md')) {
    if (!anchorsOf(abs).has(anchor)) return `no heading with anchor #${anchor}`;
  }
  return null;
}

// ---- (b) backticked repository paths -------------------------------------------------------

const ROOT_DIRS = ['src/', 'tests/', 'bench/', 'docs/', 'scripts/', 'examples/', 'cmake/'];
const FILE_EXTS = ['.md', '.cc', '.h', '.mjs', '.sh', '.json'];

// Explicit exceptions, each with its reason: paths that exist only once something ran.
const ALLOWED_PREFIXES = new Map([
  ['bench/out', 'the benches\' scratch output (gitignored), created when a bench runs'],
]);
const allowed = (p) => [...ALLOWED_PREFIXES.keys()].some((a) => p === a || p.startsWith(`${a}/`));

// Whether `code` (the text between backticks) names a repository path we should check.
function repositoryPath(code) {
  let p = code.trim();
  if (/\s/.test(p) || p.includes('://') || p.startsWith('node_modules/')) return null;
  // Placeholders and patterns, not paths: globs, <N>, ${VAR}, "...", chk-N, vN.
  if (/[*<>{}$…|]|\.\.\.|\?/.test(p)) return null;
  p = p.replace(/#.*$/, '').replace(/:\d+(?:[-,]\d+)*$/, '');  // anchors, line numbers
  if (p.split('/').some((seg) => /(^|[-_.])(N|NN|NNNNN|X|ID|DIR)([-_.]|$)/.test(seg))) return null;
  const rooted = ROOT_DIRS.some((d) => p.startsWith(d));
  const fileLike = p.includes('/') && FILE_EXTS.some((e) => p.endsWith(e));
  if (!rooted && !fileLike) return null;
  return p;
}

// Where a cited path may be relative to: the repository root, the doc's own directory, src/
// (include paths such as `floe/io/file.h`) and src/floe/ (module paths such as
// `runtime/checkpoint_config.cc` in a module README).
function resolvePath(docRel, p) {
  const bases = [root, path.dirname(path.join(root, docRel)), path.join(root, 'src'),
                 path.join(root, 'src', 'floe')];
  return bases.some((b) => fs.existsSync(path.join(b, p)));
}

// ---- main ----------------------------------------------------------------------------------

const broken = [];
let links = 0;
let paths = 0;
for (const docRel of docFiles()) {
  const lines = proseLines(fs.readFileSync(path.join(root, docRel), 'utf8'));
  lines.forEach((line, i) => {
    const where = `${docRel}:${i + 1}`;
    // Inline code first: links inside it are text, and its paths are checked as paths.
    const codeSpans = [];
    const prose = line.replace(/(`+)([^`]|[^`].*?[^`])\1(?!`)/g, (_, ticks, code) => {
      codeSpans.push(code);
      return ' '.repeat(ticks.length * 2 + code.length);
    });
    for (const m of prose.matchAll(/!?\[(?:[^\]]|\][^(])*?\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
      links++;
      const why = checkLink(docRel, m[1]);
      if (why) broken.push(`${where}: ${m[1]} (${why})`);
    }
    for (const code of codeSpans) {
      const p = repositoryPath(code);
      if (p === null || allowed(p)) continue;
      paths++;
      if (!resolvePath(docRel, p)) broken.push(`${where}: \`${code}\` (no such file or directory)`);
    }
  });
}

if (broken.length > 0) {
  for (const b of broken) console.log(b);
  console.error(`check-docs: ${broken.length} broken reference(s) (${links} links and ${paths} ` +
                `paths checked)`);
  process.exit(1);
}
console.log(`check-docs: ${links} links and ${paths} paths, all present`);

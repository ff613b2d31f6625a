#!/usr/bin/env node
// Lists production functions longer than a limit, so long ones are split or say why they stay.
//
//   node scripts/long-functions.mjs [--all] [--limit N] [REPO_ROOT]   (defaults: 120, .)
//
// Scans src/**/*.cc except *_test.cc with a simple brace matcher (comments, string and character
// literals blanked out first): a `{` at namespace or class scope whose header has a parameter
// list opens a function, which runs to its matching `}`; lambdas and blocks inside it count as
// part of it. Length = lines from the function's name to its closing brace.
//
// A function may stay long when the comment block right above it has a line starting with
// `// Stays long:` and the reason. Prints `file:line name length` for each function over the
// limit without one and exits 1; exits 0 when there is none. --all also lists the ones that
// say why, with their reason. No npm dependencies.

import fs from 'node:fs';
import path from 'node:path';

const args = process.argv.slice(2);
let limit = 120;
let all = false;
let root = '.';
for (let i = 0; i < args.length; ++i) {
  if (args[i] === '--all') all = true;
  else if (args[i] === '--limit') limit = Number(args[++i]);
  else root = args[i];
}
root = path.resolve(root);
const MARKER = '// Stays long:';

function sources(dir) {
  const out = [];
  for (const e of fs.readdirSync(path.join(root, dir), { withFileTypes: true })) {
    const rel = path.posix.join(dir, e.name);
    if (e.isDirectory()) out.push(...sources(rel));
    else if (e.name.endsWith('.cc') && !e.name.endsWith('_test.cc')) out.push(rel);
  }
  return out.sort();
}

// The text with comments and literals replaced by spaces (newlines kept, so offsets and line
// numbers stay those of the file).
function blank(text) {
  const out = text.split('');
  let i = 0;
  const wipe = (from, to) => {
    for (let k = from; k < to; ++k) if (out[k] !== '\n') out[k] = ' ';
  };
  while (i < text.length) {
    const c = text[i];
    if (c === '#' && /^[ \t]*$/.test(text.slice(text.lastIndexOf('\n', i - 1) + 1, i))) {
      // A preprocessor line, with its continuations.
      let stop = i;
      do {
        stop = text.indexOf('\n', stop + 1);
      } while (stop > 0 && text[stop - 1] === '\\');
      if (stop < 0) stop = text.length;
      wipe(i, stop);
      i = stop;
    } else if (c === '/' && text[i + 1] === '/') {
      const end = text.indexOf('\n', i);
      const stop = end < 0 ? text.length : end;
      wipe(i, stop);
      i = stop;
    } else if (c === '/' && text[i + 1] === '*') {
      const end = text.indexOf('*/', i + 2);
      const stop = end < 0 ? text.length : end + 2;
      wipe(i, stop);
      i = stop;
    } else if (c === 'R' && text[i + 1] === '"' && !/[A-Za-z0-9_]/.test(text[i - 1] || '')) {
      // Raw string R"delim( ... )delim".
      const open = text.indexOf('(', i + 2);
      const delim = text.slice(i + 2, open);
      const end = text.indexOf(')' + delim + '"', open);
      const stop = end < 0 ? text.length : end + delim.length + 2;
      wipe(i, stop);
      i = stop;
    } else if (c === '"' || (c === "'" && !/[0-9A-Fa-f]/.test(text[i - 1] || ''))) {
      // A literal (a ' after a hex digit is a digit separator: 1'000'000).
      let k = i + 1;
      while (k < text.length && text[k] !== c && text[k] !== '\n') k += text[k] === '\\' ? 2 : 1;
      wipe(i, k + 1);
      i = k + 1;
    } else {
      ++i;
    }
  }
  return out.join('');
}

// The function name in a header: the (qualified) identifier before its parameter list.
function nameOf(header) {
  header = header.replace(/\bdecltype\s*\([^()]*\)/g, 'decltype');  // a return type's parens
  const op = header.match(/((?:[A-Za-z_]\w*::)*operator\s*(?:\(\)|[^\s(]+))\s*\(/);
  if (op) return op[1].replace(/\s+/g, '');
  let angle = 0;
  for (let i = 0; i < header.length; ++i) {
    const c = header[i];
    if (c === '<') ++angle;
    else if (c === '>') angle = Math.max(0, angle - 1);
    else if (c === '(' && angle === 0) {
      const m = header.slice(0, i).match(/(~?[A-Za-z_][\w:~]*)\s*$/);
      return m ? m[1] : null;
    }
  }
  return null;
}

const CONTROL = /^(if|for|while|switch|catch|do|else|try|return)\b/;

// Functions in `text` as {line, name, length, headerLine}.
function functionsIn(text) {
  const src = blank(text);
  const lineAt = [];
  let line = 1;
  for (let i = 0; i < src.length; ++i) {
    lineAt.push(line);
    if (src[i] === '\n') ++line;
  }
  const found = [];
  // Scope kinds: 'outer' (namespace, class, extern), 'function', 'block' (inside a function or
  // an initializer), 'init' (a member's brace initializer in a constructor's header).
  const stack = [];
  let headerStart = 0;
  const inFunction = () => stack.some((s) => s.kind === 'function' || s.kind === 'block');
  for (let i = 0; i < src.length; ++i) {
    const c = src[i];
    if (c === ';' && !inFunction() && !stack.some((s) => s.kind === 'init')) {
      headerStart = i + 1;
    } else if (c === '{') {
      if (inFunction()) {
        stack.push({ kind: 'block' });
        continue;
      }
      const flat = src.slice(headerStart, i).replace(/\s+/g, ' ').trim();
      let kind = 'outer';
      if (/\)\s*(noexcept\s*)?:[^:]/.test(flat) && /[\w>]$/.test(flat)) {
        kind = 'init';  // `Foo(int a) : a_{a} {`: a member initializer, the header goes on
      } else if (/\b(namespace|class|struct|union|enum)\b[^()]*$/.test(flat) ||
                 /^extern\b/.test(flat) || !flat.includes('(')) {
        kind = 'outer';
      } else if (/=$/.test(flat) || /=\s*[^=]*\[[^\]]*\]\s*\(/.test(flat) || CONTROL.test(flat)) {
        kind = 'block';  // an initializer or a lambda at namespace scope
      } else {
        kind = 'function';
      }
      let name = kind === 'function' ? nameOf(flat) : null;
      if (kind === 'function' && name === null) kind = 'block';
      const CLASS = /\b(?:class|struct|union)\s+(?:\[\[[^\]]*\]\]\s*)?(\w+)/;
      const cls = kind === 'outer' ? flat.match(CLASS) : null;
      if (name !== null && !name.includes('::')) {
        // A method defined in its class: qualify it with the enclosing classes.
        const classes = stack.filter((s) => s.className).map((s) => s.className);
        if (classes.length > 0) name = [...classes, name].join('::');
      }
      let first = headerStart;
      while (first < i && /\s/.test(src[first])) ++first;
      // The name's line (a header may start with a template<...> line or the return type).
      let nameLine = lineAt[first];
      if (name) {
        const last = name.split('::').pop();
        const word = last.startsWith('operator') ? 'operator' : last.replace(/^~/, '');
        const m = new RegExp(`\\b${word}\\b`).exec(src.slice(first, i));
        if (m) nameLine = lineAt[first + m.index];
      }
      const className = cls ? cls[1] : null;
      stack.push({ kind, name, className, headerLine: lineAt[first], nameLine });
      if (kind !== 'init') headerStart = i + 1;
    } else if (c === '}') {
      const s = stack.pop();
      if (!s) continue;
      if (s.kind === 'function') {
        found.push({
          line: s.nameLine,
          headerLine: s.headerLine,
          name: s.name,
          length: lineAt[i] - s.nameLine + 1,
        });
      }
      if (!inFunction() && s.kind !== 'init') headerStart = i + 1;
    }
  }
  return found;
}

// The reason given in the comment block right above line `headerLine` (1-based), or null.
function reasonAbove(lines, headerLine) {
  for (let k = headerLine - 2; k >= 0; --k) {
    const t = lines[k].trim();
    if (!t.startsWith('//')) break;
    if (t.startsWith(MARKER)) return t.slice(MARKER.length).trim();
  }
  return null;
}

let unexplained = 0;
for (const file of sources('src')) {
  const text = fs.readFileSync(path.join(root, file), 'utf8');
  const lines = text.split('\n');
  for (const f of functionsIn(text)) {
    if (f.length <= limit) continue;
    const reason = reasonAbove(lines, f.headerLine);
    if (reason === null) {
      ++unexplained;
      console.log(`${file}:${f.line} ${f.name} ${f.length}`);
    } else if (all) {
      console.log(`${file}:${f.line} ${f.name} ${f.length} (stays long: ${reason})`);
    }
  }
}
process.exit(unexplained === 0 ? 0 : 1);

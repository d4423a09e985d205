const fs = require('fs');
const [fmt, report, idsFile] = process.argv.slice(2);
const root = process.cwd() + '/';
const rel = (p) => (p && p.startsWith(root) ? p.slice(root.length) : p || '');
let text = '';
try { text = fs.readFileSync(report, 'utf8'); } catch (e) { console.log('no report: ' + report); process.exit(1); }
const got = new Map();
const put = (id, status) => { if (!got.has(id) || status !== 'pass') got.set(id, status); };
if (fmt === 'jest' || fmt === 'vitest') {
  for (const s of JSON.parse(text).testResults || []) {
    for (const a of s.assertionResults || []) {
      put([rel(s.name), ...(a.ancestorTitles || []), a.title].join(' > '), a.status === 'passed' ? 'pass' : a.status);
    }
  }
} else if (fmt === 'mocha') {
  const d = JSON.parse(text);
  const key = (t) => rel(t.file) + ' > ' + t.fullTitle;
  for (const t of d.passes || []) put(key(t), 'pass');
  for (const t of d.pending || []) put(key(t), 'skip');
  for (const t of d.failures || []) put(key(t), 'fail');
} else if (fmt === 'ava') {
  for (const line of text.split('\n')) {
    const m = /^(not ok|ok)\s+\d+\s*(?:-\s*)?(.*?)(?:\s+#\s*(SKIP|TODO)\b.*)?$/i.exec(line);
    if (m) put(rel(m[2].trim()), m[3] ? 'skip' : (m[1].toLowerCase() === 'ok' ? 'pass' : 'fail'));
  }
} else if (fmt === 'node') {
  const un = (s) => s.replace(/&quot;/g, '"').replace(/&apos;/g, "'").replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>').replace(/&amp;/g, '&');
  const stack = [];
  let open = null;
  const re = /<(\/?)(testsuite|testcase|failure|error|skipped)\b([^>]*?)(\/?)>/g;
  let m;
  while ((m = re.exec(text))) {
    const [, close, tag, attrs, self] = m;
    const name = (/\bname="([^"]*)"/.exec(attrs) || [, ''])[1];
    if (tag === 'testsuite') { if (close) stack.pop(); else if (!self) stack.push(un(name)); }
    else if (tag === 'testcase') {
      if (close) { if (open) put(open.id, open.status); open = null; }
      else {
        const id = [...stack, un(name)].join(' > ');
        if (self) put(id, 'pass'); else open = { id, status: 'pass' };
      }
    } else if (open && !close) { open.status = tag === 'skipped' ? 'skip' : 'fail'; }
  }
}
let bad = 0;
for (const id of fs.readFileSync(idsFile, 'utf8').split('\n').filter(Boolean)) {
  if (got.get(id) !== 'pass') { console.log('NOT PASSED: ' + id + ' (' + (got.get(id) || 'missing') + ')'); bad++; }
}
console.log(bad ? bad + ' test(s) did not pass' : 'all tests passed');
process.exit(bad ? 1 : 0);

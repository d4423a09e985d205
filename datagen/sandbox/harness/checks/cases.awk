function wanted(want,   n, l) { while ((getline l < ENVIRON["IDS_FILE"]) > 0) want[++n] = l; return n }
function unxml(v) { gsub(/&quot;/, "\"", v); gsub(/&apos;/, "'", v); gsub(/&lt;/, "<", v);
  gsub(/&gt;/, ">", v); gsub(/&#10;/, "\n", v); gsub(/&#13;/, "\r", v); gsub(/&amp;/, "\\&", v); return v }
function attr(s, k,   n) { if (match(s, " " k "=\"[^\"]*\"")) { n = length(k) + 3;
  return unxml(substr(s, RSTART + n, RLENGTH - n - 1)) } return "" }
function trim(v) { gsub(/^[ \t\r\n]+|[ \t\r\n]+$/, "", v); return v }
function addcase(nm, st) { nm = trim(nm); seen[nm]++; if (seen[nm] > 1) nm = nm " (" seen[nm] ")"
  if (!(nm in cst)) order[++ncase] = nm; cst[nm] = st }
function checkname(nm,   i, rest) { for (i = 2; i < length(nm); i++) { rest = substr(nm, i)
    if (substr(nm, i - 1, 1) !~ /[ \t]/ && rest ~ /^[ \t]+\[.*\]\[.*\]$/) return substr(nm, 1, i - 1) }
  return nm }
function line(s,   lc, p, n, rest, st) { sub(/\r$/, "", s); lc = tolower(s)
  if (s ~ /^\[ RUN +\] [^ \t]+$/) { running[++nrun] = substr(s, index(s, "] ") + 2); return }
  if (s ~ /^[^:]+:[0-9]+:[A-Za-z_][A-Za-z0-9_]*:(PASS|FAIL|IGNORE)([^A-Za-z0-9_]|$)/) { split(s, p, ":")
    addcase(p[3], p[4] ~ /^PASS/ ? "pass" : p[4] ~ /^FAIL/ ? "fail" : "skip"); return }
  if (s ~ /^\[ +(OK|FAILED|SKIPPED) +\] [^ \t]+ \([0-9]+ ms\)$/) { rest = substr(s, index(s, "] ") + 2)
    rest = substr(rest, 1, index(rest, " (") - 1)
    for (n = 1; n <= nrun; n++) if (running[n] == rest) { running[n] = ""; break }
    addcase(rest, s ~ /^\[ +OK/ ? "pass" : s ~ /^\[ +FAILED/ ? "fail" : "skip"); return }
  if (lc ~ /^(not ok|ok) [0-9]+ /) { st = lc ~ /^not/ ? "fail" : "pass"; rest = s; sub(/^[^ ]+( ok)? [0-9]+/, "", rest)
    if (rest ~ /^ - ./) rest = substr(rest, 4); else rest = substr(rest, 2)
    if (match(tolower(rest), / # (skip|todo)([^a-z0-9_]|$)/) && RSTART > 1) {
      rest = substr(rest, 1, RSTART - 1); st = "skip" }
    if (rest != "") addcase(rest, st); return }
  if (lc ~ /^\[(pass|fail)\] ./) { addcase(checkname(trim(substr(s, 8))), lc ~ /^\[pass/ ? "pass" : "fail"); return }
  if (s ~ /^Testing [^ \t].*: (OK|FAILED)$/) { st = s ~ /: OK$/ ? "pass" : "fail"; jend = 1
    addcase(substr(s, 9, length(s) - 8 - (st == "pass" ? 4 : 8)), st); return }
  if (nrun && match(s, /\[ +(OK|FAILED|SKIPPED) +\] [^ \t]+( \([0-9]+ ms\))?$/)) { rest = substr(s, RSTART)
    st = rest ~ /^\[ +OK/ ? "pass" : rest ~ /^\[ +FAILED/ ? "fail" : "skip"
    rest = substr(rest, index(rest, "] ") + 2); sub(/ \([0-9]+ ms\)$/, "", rest)
    for (n = 1; n <= nrun; n++) if (running[n] == rest) { running[n] = ""; addcase(rest, st); return } }
  if (s ~ /^Testing [^ \t:][^:]*: /) jrun[++njrun] = trim(substr(s, 9, index(s, ": ") - 9)) }
function put(id, st) { if (!(id in res) || rank[st] > rank[res[id]]) res[id] = st }
function done(   i, bad, nm) { if (cur == "") return
  for (i = 1; exe != "pass" && i <= nrun; i++) if (running[i] != "" && !(running[i] in cst)) {
    order[++ncase] = running[i]; cst[running[i]] = "error" }
  for (i = 1; exe != "pass" && jend && i <= njrun; i++) if (!(jrun[i] in cst)) {
    order[++ncase] = jrun[i]; cst[jrun[i]] = "error" }
  if (exe == "skip") ncase = 0
  for (i = 1; i <= ncase; i++) { nm = order[i]; put(cur "::" nm, cst[nm])
    if (cst[nm] != "pass" && cst[nm] != "skip") bad = 1 }
  if (ncase == 0 || ((exe == "fail" || exe == "error") && !bad)) put(cur, exe)
  cur = ""; ncase = 0; nrun = 0; njrun = 0; jend = 0; inout = 0
  split("", cst); split("", seen); split("", order); split("", running); split("", jrun) }
BEGIN { rank["skip"] = 0; rank["pass"] = 1; rank["fail"] = 2; rank["error"] = 3 }

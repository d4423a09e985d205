function wanted(want,   n, l) { while ((getline l < ENVIRON["IDS_FILE"]) > 0) want[++n] = l; return n }
function unxml(v) { gsub(/&quot;/, "\"", v); gsub(/&apos;/, "'", v); gsub(/&lt;/, "<", v);
  gsub(/&gt;/, ">", v); gsub(/&#10;/, "\n", v); gsub(/&amp;/, "\\&", v); return v }
function attr(s, k,   n) { if (match(s, " " k "=\"[^\"]*\"")) { n = length(k) + 3;
  return unxml(substr(s, RSTART + n, RLENGTH - n - 1)) } return "" }
function caseid(s,   name, cls) {
  name = attr(s, "name")
  if (ENVIRON["FMT"] == "ctest") return name
  if (ENVIRON["FMT"] == "phpunit") { cls = attr(s, "class"); return cls "::" name }
  cls = attr(s, "classname"); sub(/\(\)$/, "", name)
  return name == "" ? cls : cls "#" name }
function done() { if (cur != "") { if (bad) failed[cur] = 1; else ok[cur] = 1 } cur = "" }
/<testcase[ >]/ { done(); tag = substr($0, index($0, "<testcase")); cur = caseid(tag); bad = 0
  if (ENVIRON["FMT"] == "ctest" && tag ~ /status="(disabled|notrun)"/) bad = 1
  if (tag ~ /^<testcase[^>]*\/>/) done(); next }
cur != "" && /<(failure|skipped)[ >\/]/ { bad = 1 }
cur != "" && /<error[ >\/]/ && !/RiskyTestError/ { bad = 1 }
/<\/testcase>/ { done() }
END { done(); n = wanted(want); rc = 0
  for (i = 1; i <= n; i++) if (want[i] != "" && (!(want[i] in ok) || (want[i] in failed))) {
    print "NOT PASSED: " want[i]; rc = 1 }
  exit rc }

inout { s = $0; end = index(s, "</system-out>"); if (end) s = substr(s, 1, end - 1)
  line(unxml(s)); if (end) inout = 0; next }
/<testcase[ >]/ { done(); tag = substr($0, index($0, "<testcase")); cur = attr(tag, "name")
  exe = tag ~ /status="disabled"/ ? "skip" : "pass" }
cur != "" && /<error[ >\/]/ { exe = "error" }
cur != "" && /<failure[ >\/]/ && exe != "error" { exe = "fail" }
cur != "" && /<skipped[ >\/]/ { exe = $0 ~ /Unable to find executable/ ? "error" : exe == "pass" ? "skip" : exe }
cur != "" && /<system-out>/ { s = substr($0, index($0, "<system-out>") + 12); end = index(s, "</system-out>")
  if (end) s = substr(s, 1, end - 1); else inout = 1
  if (s != "" || inout) line(unxml(s)) }
/<\/testcase>/ { done() }

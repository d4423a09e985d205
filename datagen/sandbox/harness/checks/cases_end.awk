END { done(); n = wanted(want); rc = 0
  for (i = 1; i <= n; i++) if (want[i] != "" && res[want[i]] != "pass") { print "NOT PASSED: " want[i]; rc = 1 }
  exit rc }

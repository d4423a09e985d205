{ for (i = 1; i <= n; i++) if (index($0, want[i] " = ") == 1 && $0 ~ / s = \.$/) ok[i] = 1 }
BEGIN { while ((getline l < ENVIRON["IDS_FILE"]) > 0) want[++n] = l }
END { rc = 0; for (i = 1; i <= n; i++) if (want[i] != "" && !(i in ok)) { print "NOT PASSED: " want[i]; rc = 1 }
  exit rc }

{ text = text $0 }
END { while ((getline k < ENVIRON["KEYS_FILE"]) > 0) keys[++n] = k
  while ((getline k < ENVIRON["IDS_FILE"]) > 0) ids[++m] = k; rc = 0
  for (i = 1; i <= n; i++) if (keys[i] != "" && index(text, keys[i]) == 0) { print "NOT PASSED: " ids[i]; rc = 1 }
  exit rc }

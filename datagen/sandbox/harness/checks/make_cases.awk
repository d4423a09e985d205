
/^\t/ { if (cur != "") line(substr($0, 2)); next }
{ done(); n = length($0); while (n > 0 && substr($0, n, 1) != "\t") n--
  if (n > 1) { cur = substr($0, 1, n - 1); exe = substr($0, n + 1) } }

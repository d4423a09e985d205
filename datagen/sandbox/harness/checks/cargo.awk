/^ *Running /{t=($2=="unittests")?$3:$2; next} /^test .* \.\.\. /{n=$0; sub(/^test /,"",n); sub(/( - should panic)? \.\.\. .*$/,"",n); s=($NF=="ok")?"pass":"fail"; print t "::" n " " s}

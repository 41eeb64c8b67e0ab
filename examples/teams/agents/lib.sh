# Helpers for the team's agents. parley runs an agent once per message,
# with the message on stdin and in $PARLEY_MESSAGE, and sends what it
# prints as that agent. Several messages are separated by a line holding
# only the ASCII record separator (printf '\036\n').

# field NAME: the value of a header field of the message being handled.
field() {
  awk -v k="$1" '
    NR == 1 && $0 != "---" { exit }
    NR > 1 && $0 == "---" { exit }
    index($0, k ":") == 1 {
      v = substr($0, length(k) + 2)
      sub(/^ */, "", v)
      if (v ~ /^".*"$/) v = substr(v, 2, length(v) - 2)
      printf "%s", v
      exit
    }
  ' "$PARLEY_MESSAGE"
}

# body: the message's text, after its header.
body() {
  sed '1,/^---$/d' "$PARLEY_MESSAGE"
}

# next: end one message, so that another can follow.
next() {
  printf '\036\n'
}

# note TEXT: remember something in the agent's own notes (work/AGENT.log).
note() {
  [ -d work ] || mkdir -p work
  printf '%s\n' "$*" >> "work/$PARLEY_AGENT.log"
}

# Helpers for the pipeline's agents. parley runs an agent once per
# message, with the message in $PARLEY_MESSAGE, and sends what it prints
# as that agent.

# parley's notice that something an agent sent was refused (see "When a
# message is refused" in the README) names the file and the reason; these
# scripted agents never send a bad message, and say nothing back to one.
if [ "$PARLEY_TYPE" = message_refused ]; then
  exit 0
fi

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

# parley stop asks an agent to shut down (a shutdown_request of the
# team-requests skill): these agents always agree.
if [ "$PARLEY_TYPE" = shutdown_request ]; then
  printf -- '---\nto: %s\ntype: shutdown_response\nrequest_id: %s\napprove: true\n---\nStopping.\n' "$PARLEY_FROM" "$(field request_id)"
  exit 0
fi

# envelope TYPE SIGNAL: the start of an answer to the orchestrator, in
# the thread of the message being handled; the caller adds the fields of
# TYPE, the closing ---, and the body.
envelope() {
  printf -- '---\nto: orch\ntype: %s\nsignal: %s\nthread: %s\nreply_to: %s\n' "$1" "$2" "$(field thread)" "$PARLEY_MESSAGE_ID"
}

#!/bin/sh
# The lead: hands out the work, then winds the team down.
. agents/lib.sh

case "$PARLEY_TYPE" in
TASK)
  topic=$(field topic)
  mkdir -p work && : > work/lead.log   # a new task: start new notes
  note "task: $topic"
  # To everyone at once: a broadcast.
  printf -- '---\nto: "*"\ntype: ANNOUNCE\n---\nNew task: %s. researcher gathers the facts, writer drafts.\n' "$topic"
  next
  # To one teammate: a direct message.
  printf -- '---\nto: researcher\ntype: RESEARCH\ntopic: %s\n---\nFind three facts about %s.\n' "$topic" "$topic"
  ;;
FINDINGS)
  note "findings seen"
  ;;
DRAFT)
  note "draft received: $(field file)"
  # Ask both teammates to shut down: the structured request of the
  # team-requests protocol, answered by shutdown_response.
  for who in researcher writer; do
    printf -- '---\nto: %s\ntype: shutdown_request\nrequest_id: stop-%s\n---\nThe draft is in. Thank you, you may stop.\n' "$who" "$who"
    next
  done
  ;;
shutdown_response)
  who=$PARLEY_FROM
  if [ "$(field approve)" = true ]; then
    note "$who stopped"
  else
    note "$who stays: $(field reason)"
  fi
  # Once both have answered, report and close the session.
  if [ "$(grep -c 'stopped\|stays' work/lead.log)" -ge 2 ]; then
    printf -- '---\nto: you\ntype: TEAM_DONE\n---\nThe draft is in work/draft.md.\n\n'
    grep 'stopped\|stays' work/lead.log
  fi
  ;;
esac
exit 0

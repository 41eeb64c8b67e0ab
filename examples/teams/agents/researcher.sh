#!/bin/sh
# The researcher: absorbed in its books, it misses the first request and
# answers only when the lead's timeout nudges it.
. agents/lib.sh

case "$PARLEY_TYPE" in
RESEARCH)
  note "asked about: $(field topic)"
  # Silent on purpose: no output, no message.
  ;;
CONTEXT_REFRESH)
  topic=$(sed -n 's/^asked about: //p' work/researcher.log | tail -n 1)
  # No recipient: the route on the signal sends it to the writer, with a
  # copy to the lead.
  printf -- '---\ntype: FINDINGS\nsignal: findings-ready\ntopic: %s\n---\n' "$topic"
  printf -- '- The first keeper lit the lamp in 1821.\n'
  printf -- '- The light could be seen for nineteen miles.\n'
  printf -- '- The last keeper left in 1987, when the lamp was automated.\n'
  ;;
shutdown_request)
  printf -- '---\nto: %s\ntype: shutdown_response\nrequest_id: %s\napprove: true\n---\nGoing back to my books.\n' "$PARLEY_FROM" "$(field request_id)"
  ;;
esac
exit 0

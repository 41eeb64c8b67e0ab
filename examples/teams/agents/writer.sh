#!/bin/sh
# The writer: drafts from the findings, and will not stop before it has
# polished its last paragraph.
. agents/lib.sh

case "$PARLEY_TYPE" in
FINDINGS)
  mkdir -p work
  {
    printf '# %s\n\n' "$(field topic)"
    # One paragraph of the facts.
    body | sed -n 's/^- //p' | tr '\n' ' ' | sed 's/ *$//'
    printf '\n'
  } > work/draft.md
  note "drafted work/draft.md"
  printf -- '---\nto: lead\ntype: DRAFT\nfile: work/draft.md\n---\nA first draft is in work/draft.md.\n'
  ;;
shutdown_request)
  printf -- '---\nto: %s\ntype: shutdown_response\nrequest_id: %s\napprove: false\nreason: still polishing the last paragraph\n---\nNot yet.\n' "$PARLEY_FROM" "$(field request_id)"
  ;;
esac
exit 0

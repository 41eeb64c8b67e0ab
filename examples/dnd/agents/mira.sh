#!/bin/sh
# Mira Quickfoot's teammate: it plays the human's character. While the
# human is at the table (HUMAN_RELAY, the start) it passes each prompt of
# the game master to them as [RELAY_TO_HUMAN] and turns their
# [HUMAN_DECISION] into Mira's [PLAYER_TO_GM]; while they are away
# (AUTONOMOUS) it plays Mira itself, and tells them what she did when they
# come back.
. agents/lib.sh
S=$(state)
once
recall mode HUMAN_RELAY

act() { printf '[PLAYER_TO_GM]\ntype: ACTION\ncharacter: mira-quickfoot\n\n%s\n' "$1"; }

# options REQUEST_TYPE: what Mira would suggest for the prompt at hand, as
# the list items of ## Suggested Options: they follow what the game master
# asks (a moment to take in, a secret move, a turn in a fight), so two
# decisions do not offer the same choices.
options() {
  case "$1" in
  SECRET_ACTION) printf -- '- Slip down the stair along the wall, in the shadow of the chant\n- Wait for the chant to swell, then go down\n' ;;
  COMBAT_ACTION) printf -- '- Dart in low and stab at the nearer acolyte'"'"'s knees\n- Hang back and throw a knife\n' ;;
  REFLECTION) printf -- '- Search the altar for a hidden catch\n- Listen for where the breathing came from\n' ;;
  *) printf -- '- Look around carefully\n- Keep back and watch\n' ;;
  esac
}

# on_her_own REQUEST_TYPE: Mira answers the prompt waiting for the human
# herself, as the first of her options for it, and notes what she did.
on_her_own() {
  rm -f "$S/pending"
  case "$1" in
  SECRET_ACTION)
    did="Mira slipped down the stair along the wall, in the shadow of the chant."
    act "Mira slips down the stair along the wall, in the shadow of the chant." ;;
  COMBAT_ACTION)
    did="Mira darted in low and stabbed at an acolyte's knees, then rolled clear."
    act "Mira darts in low, stabs at the nearer acolyte's knees, and rolls clear of the water." ;;
  REFLECTION)
    did="Mira searched the altar for a hidden catch."
    act "Mira runs her fingers along the altar, looking for a hidden catch." ;;
  *)
    did="Mira kept back and watched."
    act "Mira keeps back and watches." ;;
  esac
  echo "$did" >> "$S/away"
}

case "$PARLEY_TYPE" in
GM_TO_PLAYER)
  if [ "$mode" = AUTONOMOUS ]; then
    on_her_own "$(field request_type)"
  else
    field request_type > "$S/pending"
    printf '[RELAY_TO_HUMAN]\ncharacter: mira-quickfoot\n\n'
    body | sed 's/^## Request$/## Decision Needed/'
    printf '\n## Suggested Options\n'
    options "$(field request_type)"
  fi ;;
HUMAN_DECISION)
  rm -f "$S/pending"
  act "$(body | sed '/^$/d' | tr '\n' ' ' | sed 's/ $//')" ;;
MODE_SWITCH)
  new=$(field mode)
  echo "$new" > "$S/mode"
  if [ "$new" = AUTONOMOUS ] && [ -e "$S/pending" ]; then
    on_her_own "$(cat "$S/pending")"
  elif [ "$new" = HUMAN_RELAY ] && [ -s "$S/away" ]; then
    printf -- '---\nto: you\n---\nWhile you were away:\n\n'
    sed 's/^/- /' "$S/away"
    rm -f "$S/away"
  fi ;;
JOURNAL_CHECKPOINT)
  printf -- '---\nto: journal\n---\n[JOURNAL_ENTRY]\nTitle: %s\nWhat happened: We went down under the chapel.\nWhat I did: Found the stair, and kept my feet dry. Mostly.\nWhat I learned: Somebody still rings that bell.\nHow I feel: Curious. Too curious, Tor says.\n' "$(field scene_slug)" ;;
shutdown_request) shutdown "Mira waves goodnight." ;;
esac
exit 0

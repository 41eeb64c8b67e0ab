#!/bin/sh
# The narrator: the scribe agent keeps every [NARRATIVE] in the scene
# files; the narrator adds what the narrative does not say: the players'
# asides to each other, and the moments the game master asks it to dwell on.
. agents/lib.sh

case "$PARLEY_TYPE" in
PLAYER_TO_PLAYER)
  printf -- '---\nto: scribe\n---\n*Aside, %s to %s:* %s\n' "$(field from)" "$(field to)" "$(body | sed '/^$/d' | tr '\n' ' ' | sed 's/ $//')" ;;
NARRATOR_NOTE)
  printf -- '---\nto: scribe\n---\n*The bell.* Up close it is green bronze taller than a man, and its one note goes through stone, water and bone alike.\n' ;;
shutdown_request) shutdown "The scene files are written." ;;
esac
exit 0

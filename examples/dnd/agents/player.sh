#!/bin/sh
# An AI player, scripted: Tor, Wren or Sel, by the agent it runs as. In
# phase 2 it answers the game master's [GM_TO_PLAYER] with [PLAYER_TO_GM]
# (Wren talks to Sel instead when asked to); in phase 1 the team lead
# brings the prompt, and the answer is a plain reply to it. It writes its
# journal when the team lead asks.
. agents/lib.sh
S=$(state)
me=$PARLEY_AGENT
case $me in
tor) character=tor-ashgrove ;;
wren) character=wren-halloway ;;
sel) character=sel-varga ;;
esac

# say TYPE TEXT: a [PLAYER_TO_GM], or in phase 1 (the prompt came from the
# team lead) a plain answer to it; a veto starts with [VETO] then.
say() {
  if [ "$PARLEY_FROM" != gm ]; then
    if [ "$1" = VETO ]; then printf '[VETO] %s\n' "$2"; else printf '%s\n' "$2"; fi
    return
  fi
  printf '[PLAYER_TO_GM]\ntype: %s\ncharacter: %s\n\n%s\n' "$1" "$character" "$2"
}

case "$PARLEY_TYPE" in
GM_TO_PLAYER)
  request=$(field request_type)
  case "$me:$request" in
  tor:QUICK_REACTION) say VETO "This is the fen that took Tor's farm. I need the full picture before he moves." ;;
  tor:FULL_CONTEXT) say ACTION 'Tor wades forward and plants himself between the others and the black water. "Whatever you are, you go through me."' ;;
  tor:COMBAT_ACTION) say ACTION "Tor swings his longsword at the nearer acolyte, shield high." ;;
  wren:INTERACTION)
    printf '[PLAYER_TO_PLAYER]\nfrom: wren-halloway\nto: sel-varga\n\n*low* "Sel, that hymn the bell keeps time to: I have heard it sung in Reedholm. Do you know it?"\n' ;;
  wren:COMBAT_ACTION) say ACTION "Wren draws her rapier and sings a cutting verse at the acolyte on the left." ;;
  wren:*) say REACTION '"Candles, lit, in a church with no priest. Wonderful. Truly." Wren keeps to the wall.' ;;
  sel:QUICK_REACTION|sel:OPTIONAL_REACTION) say REACTION "Sel touches the silver charm at her throat and murmurs a prayer to Saint Orla." ;;
  sel:COMBAT_ACTION) say ACTION "Sel raises the silver bell charm and calls on Saint Orla's light against the drowned." ;;
  *) say ACTION "$character waits, watchful." ;;
  esac ;;
PLAYER_TO_PLAYER)
  # Sel answers Wren once; Wren does not answer back, so the talk ends.
  if [ "$me" = sel ] && [ ! -e "$S/answered-wren" ]; then
    : > "$S/answered-wren"
    printf '[PLAYER_TO_PLAYER]\nfrom: sel-varga\nto: wren-halloway\n\n*not looking up* "I know it. My sister sang it. Later, Wren."\n'
  fi ;;
JOURNAL_CHECKPOINT)
  scene=$(field scene_slug)
  recall entries 0
  entries=$((entries + 1))
  echo "$entries" > "$S/entries"
  printf -- '---\nto: journal\n---\n[JOURNAL_ENTRY]\nTitle: %s, entry %d\nWhat happened: Another hour in %s.\nWhat I did: Kept close to the others.\nWhat I learned: The bell keeps time for something.\nHow I feel: Cold, and not only from the water.\n' "$scene" "$entries" "$scene"
  ;;
shutdown_request) shutdown "Good game." ;;
esac
exit 0

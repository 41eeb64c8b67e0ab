#!/bin/sh
# The game master: a scripted session of "The Sunken Bell" in five beats.
# It answers what the table sends it, remembers where the story is in its
# state directory, and rolls its dice from a fixed seed, so every run tells
# the same story. In phase 1 (parley.yaml: phase: 1) it asks the AI players
# through the team lead with [AWAIT_PLAYERS]; in phase 2 it prompts each
# player directly with [GM_TO_PLAYER].
. agents/lib.sh
S=$(state)
once
recall beat none
phase=2
grep -q '^phase: 1' parley.yaml && phase=1

# roll SIDES: the next die of the seeded sequence.
roll() {
  recall seed 20261124
  seed=$(( (seed * 1103515245 + 12345) % 2147483648 ))
  echo "$seed" > "$S/seed"
  echo $(( seed / 65536 % $1 + 1 ))
}

# narrative SCENE SLUG LOCATION: a [NARRATIVE] for everyone, its text on stdin.
narrative() {
  printf '[NARRATIVE]\nscene_number: "%s"\nscene_slug: %s\nlocation: %s\n\n' "$1" "$2" "$3"
  cat
}

# prompt CHARACTER REQUEST_TYPE SCENE SLUG: a [GM_TO_PLAYER], its sections on stdin.
prompt() {
  printf '[GM_TO_PLAYER]\nto: %s\nrequest_type: %s\nscene_number: "%s"\nscene_slug: %s\n\n' "$1" "$2" "$3" "$4"
  cat
}

# got WHAT: note that something this beat waits for has come.
got() { : > "$S/got-$beat-$1"; }
has() { [ -e "$S/got-$beat-$1" ]; }
begin() { echo "$1" > "$S/beat"; beat=$1; }

beat0() {
  begin opening
  narrative 001 the-drowned-chapel "Chapel of Saint Orla, Gallow Fen" <<'TXT'
Rain needles the black water of Gallow Fen. The chapel of Saint Orla leans
out of the marsh like a ship run aground, its roof half gone, its door
swollen shut. Somewhere beneath your feet, under the water and the stone, a
bell begins to toll: slow, patient, calling.
TXT
  next
  cat <<'TXT'
[ASK_PLAYER]
question: "The door is stuck fast. How do you get into the chapel?"
header: "Approach"
options:
  - label: "Through the collapsed nave"
    description: "Climb the fallen stones where the roof came down"
  - label: "Down the flooded crypt stairs"
    description: "Wade in through the side stair, waist-deep in cold water"
TXT
}

beat1() {
  begin nave
  narrative 001 the-drowned-chapel "Chapel of Saint Orla, Gallow Fen" <<TXT
Mira leads the way ($1). Inside, pews float in a foot of dark water and
candles burn on an altar no one has tended in a hundred years. The tolling
stops. In the silence, something under the water breathes out.
TXT
  next
  if [ "$phase" = 1 ]; then
    cat <<'TXT'
[AWAIT_PLAYERS]
scene_number: "001"
scene_slug: the-drowned-chapel
characters:
  - name: tor-ashgrove
    request_type: QUICK_REACTION
    scene_context: Dark water in a ruined chapel; lit candles on the altar.
    just_happened: The bell stopped and something under the water breathed out.
    request: "Brief reaction or [VETO]."
  - name: wren-halloway
    request_type: QUICK_REACTION
    scene_context: Dark water in a ruined chapel; lit candles on the altar.
    just_happened: The bell stopped and something under the water breathed out.
    request: "Brief reaction or [VETO]."
  - name: sel-varga
    request_type: QUICK_REACTION
    scene_context: Dark water in a ruined chapel; lit candles on the altar.
    just_happened: The bell stopped and something under the water breathed out.
    request: "Brief reaction or [VETO]."
TXT
    return
  fi
  prompt tor-ashgrove QUICK_REACTION 001 the-drowned-chapel <<'TXT'
## Scene
Black water to your shins. It smells like the night the dyke broke.

## Just Happened
Something under the water breathed out.

## Request
A line or two: how does Tor react?
TXT
  next
  prompt wren-halloway INTERACTION 001 the-drowned-chapel <<'TXT'
## Scene
Candles on the altar, burning with no one to light them.

## Just Happened
The tolling stopped the moment you stepped inside.

## Request
Say something to the party, in character, with [PLAYER_TO_PLAYER].
TXT
  next
  prompt sel-varga OPTIONAL_REACTION 001 the-drowned-chapel <<'TXT'
## Scene
The altar bears the wheel of Saint Orla, green with age.

## Just Happened
The tolling stopped; the water went still.

## Request
If you like, a line or two: how does Sel react?
TXT
  next
  prompt mira-quickfoot REFLECTION 001 the-drowned-chapel <<'TXT'
## Scene
You are first through the stones. The altar is close, the water cold.

## Just Happened
The bell stopped. Something under the water breathed out.

## Request
Take a breath: what does Mira make of this place, and what does she do?
TXT
}

beat2() {
  begin stealth
  narrative 001 the-drowned-chapel "Chapel of Saint Orla, Gallow Fen" <<'TXT'
Tor stands between the party and the water, sword drawn; Sel's prayer is a
whisper of warm light; Wren hums a fen-hymn under her breath. Mira's fingers
find a catch beneath the altar, and a narrow stair opens into the dark. On
it, two robed figures stand with their backs to you, chanting.
TXT
  next
  prompt mira-quickfoot SECRET_ACTION 001 the-drowned-chapel <<'TXT'
## Scene
A stair into the dark; two chanting figures below, backs turned.

## Just Happened
The altar's catch clicked open.

## Request
Slip past them unseen: roll a Stealth check (1d20+5, DC 12), then tell me what Mira does.
TXT
}

beat3() {
  begin combat
  narrative 002 the-bell-chamber "The bell chamber under Saint Orla" <<'TXT'
The stair ends in a round chamber where the great bell hangs over a pool of
black water. The bell swings once on its own. With the sound, the two
chanting figures turn: drowned acolytes, water running from their sleeves,
and they come for you.
TXT
  next
  printf '[NARRATOR_NOTE]\nfrom: gm\nnote: "Linger on the bell: the first sound the party hears up close."\n\nThe bell rings once as the fight begins.\n'
  for c in tor-ashgrove wren-halloway sel-varga mira-quickfoot; do
    next
    prompt "$c" COMBAT_ACTION 002 the-bell-chamber <<'TXT'
## Scene
Two drowned acolytes close in across the wet stone.

## Just Happened
The bell rang and the acolytes turned.

## Request
Your turn: your action, your target, anything you use.
TXT
  done
}

# resolve: the round is fought; damage goes on the sheets through the tools agent.
resolve() {
  begin aftermath
  hit=$(roll 20)
  dmg=$(( $(roll 6) + 1 ))
  printf -- '---\nto: tools\ntool: update_character\narguments: '"'"'{"character": "tor-ashgrove", "damage": %d}'"'"'\n---\nThe acolyte'"'"'s claw: %d to Tor.\n' "$dmg" "$dmg"
  next
  printf -- '---\nto: tools\ntool: update_character\narguments: '"'"'{"character": "wren-halloway", "damage": 2}'"'"'\n---\nCold water in the lungs: 2 to Wren.\n'
  next
  mkdir -p "$CAMPAIGN/tmp"
  printf -- '- Party HP: tor-ashgrove %d/13\n- Party HP: wren-halloway 6/8\n- SITUATION: The acolytes are ash; the bell hangs silent over the pool.\n' $(( 13 - dmg )) > "$CAMPAIGN/tmp/gm-state-delta.md"
  printf -- '- LEARNED: The drowned acolytes fall to ash when struck with silver.\n' > "$CAMPAIGN/tmp/party-knowledge-delta.md"
  narrative 002 the-bell-chamber "The bell chamber under Saint Orla" <<TXT
The first acolyte rakes Tor across the arm (a roll of $hit: $dmg damage) before
his sword bites; Sel's silver charm blazes and both figures crumble into wet
ash. Wren comes up coughing fen water. For the first time in a hundred years,
the bell is still.
TXT
  next
  printf '[STATE_UPDATED]\ndeltas_written:\n  - gm-state-delta.md\n  - party-knowledge-delta.md\ncharacters_involved:\n  - tor-ashgrove\n  - wren-halloway\n'
  next
  cat <<'TXT'
[ASK_PLAYER]
question: "The chamber is quiet. Below the pool, something vast turns over in its sleep. What now?"
header: "Onward"
options:
  - label: "Climb down to the bell"
    description: "Find out what rings it"
  - label: "Make camp and end the session here"
    description: "Rest, and come back to the bell next time"
TXT
}

# save: the human asked for a save; the GM writes its deltas.
save() {
  mkdir -p "$CAMPAIGN/tmp"
  printf -- '- SITUATION: The party is inside the chapel of Saint Orla; a stair leads down to the bell.\n' > "$CAMPAIGN/tmp/gm-state-delta.md"
  printf -- '- LEARNED: The bell rings from a chamber under the chapel altar.\n' > "$CAMPAIGN/tmp/party-knowledge-delta.md"
  printf '[STATE_UPDATED]\ndeltas_written:\n  - gm-state-delta.md\n  - party-knowledge-delta.md\ncharacters_involved:\n  - mira-quickfoot\n'
}

# finish: a final save, the closing narrative and [SESSION_END].
finish() {
  begin over
  mkdir -p "$CAMPAIGN/tmp"
  printf -- '- SITUATION: The party rests in the bell chamber; the bell is silent, and something sleeps below.\n- QUEST: Silence the Bell - silenced for tonight; what rings it is still below\n' > "$CAMPAIGN/tmp/gm-state-delta.md"
  printf -- '- LEARNED: Something vast sleeps under the pool in the bell chamber.\n' > "$CAMPAIGN/tmp/party-knowledge-delta.md"
  printf '[STATE_UPDATED]\ndeltas_written:\n  - gm-state-delta.md\n  - party-knowledge-delta.md\ncharacters_involved:\n  - tor-ashgrove\n  - wren-halloway\n  - sel-varga\n  - mira-quickfoot\n'
  next
  narrative 002 the-bell-chamber "The bell chamber under Saint Orla" <<'TXT'
You bank a small fire on the dry steps. Sel says the evening prayer; Wren
writes the hymn down before she forgets it; Tor keeps watch over the black
pool until dawn. In Reedholm, for the first night in a year, nobody walks
into the water.
TXT
  next
  cat <<'TXT'
[SESSION_END]
summary: |
  The party broke into the drowned chapel of Saint Orla, found the hidden
  stair beneath the altar, and destroyed two drowned acolytes in the bell
  chamber. The bell is silent for tonight.
state_saved: true
next_hook: "Something vast sleeps beneath the pool, and it is beginning to wake."
TXT
}

# told: the story was told to its end already (a session started again in
# a table kept by parley demo --dir): this game master knows no more of
# it, and tells it only once, so the scene files are not written twice.
# The story's state is as the last session's end saved it, and nothing was
# told since: state_saved is true (false would tell the table that what
# changed since the last save may be lost).
told() {
  cat <<'TXT'
[SESSION_END]
summary: |
  The Sunken Bell is told: this game master is a script that knows one
  session and tells it once. To play on, give the gm a model
  (examples/dnd-llm) or write the next beats in agents/gm.sh; to play this
  one again, start from a fresh copy of examples/dnd.
state_saved: true
next_hook: "Something vast sleeps beneath the pool, and it is beginning to wake."
TXT
}

# complete: go on when a beat has everything it waits for.
complete() {
  case "$beat" in
  nave)
    if [ "$phase" = 1 ]; then return; fi
    has tor && has sel && has wren && has mira && beat2 ;;
  stealth) has dice && has mira && beat3 ;;
  combat) has tor && has wren && has sel && has mira && resolve ;;
  esac
}

case "$PARLEY_TYPE" in
SESSION_COMMAND)
  case "$(field command)" in
  start) if [ "$beat" = over ]; then told; else beat0; fi ;;
  save) save ;;
  end) [ "$beat" = over ] || finish ;;
  esac ;;
PLAYER_ANSWER)
  case "$beat" in
  opening) beat1 "$(field answer)" ;;
  aftermath) finish ;;
  esac ;;
PLAYER_TO_GM)
  who=${PARLEY_FROM}
  if [ "$(field type)" = VETO ]; then
    prompt "$(field character)" FULL_CONTEXT 001 the-drowned-chapel <<'TXT'
## Scene
This is Gallow Fen, where the dyke broke the night your farm went under.
The water in the chapel is the same black water.

## Just Happened
Something under the water breathed out, and you remember the flood.

## Request
Take your time: what does Tor do?
TXT
  else
    got "$who"
    complete
  fi ;;
PLAYER_TO_PLAYER) got "$PARLEY_FROM"; complete ;;
DICE_RESULT) got dice; complete ;;
PLAYER_RESPONSES)
  if [ -n "$(sed -n '/^vetoes:/p' "$PARLEY_MESSAGE")" ]; then
    cat <<'TXT'
[AWAIT_PLAYERS]
scene_number: "001"
scene_slug: the-drowned-chapel
characters:
  - name: tor-ashgrove
    request_type: FULL_CONTEXT
    scene_context: This is Gallow Fen, where the dyke broke the night your farm went under.
    just_happened: Something under the water breathed out, and you remember the flood.
    request: "Take your time: what does Tor do?"
TXT
  else
    resolve
  fi ;;
shutdown_request) shutdown "The story is saved. Good night." ;;
esac
exit 0

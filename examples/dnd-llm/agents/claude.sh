#!/bin/sh
# A player on Claude Code. parley runs this once per message it accepts,
# with the message on stdin and, in $PARLEY_CONTEXT, a file holding the
# thread so far, the [NARRATIVE]s it was not woken for, the protocol and
# the character's files. claude -p reads its input on stdin; the argument
# says what to do with it; --output-format text prints the answer alone,
# which parley sends as the agent (a [PLAYER_TO_GM], or plain text as a
# reply to the game master).
{
  cat "$PARLEY_CONTEXT"
  printf '\n# The message to answer\n\n'
  cat
} | claude -p --output-format text \
  --append-system-prompt "$(cat prompts/player.md)" \
  "You are $PARLEY_AGENT. Answer the message at the end of this input, as your character, with one message."

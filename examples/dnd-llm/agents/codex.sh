#!/bin/sh
# A player on Codex. codex exec takes the instruction as its argument and
# what is piped to it as context; it prints progress on stderr and only
# its final message on stdout, which parley sends as the agent. Codex
# runs read-only here (--sandbox read-only): a player only answers.
{
  cat prompts/player.md
  printf '\n'
  cat "$PARLEY_CONTEXT"
  printf '\n# The message to answer\n\n'
  cat
} | codex exec --skip-git-repo-check --sandbox read-only --ephemeral \
  "You are $PARLEY_AGENT. Answer the message at the end of this input, as your character, with one message."

# Helpers for the table's scripted agents. parley runs an agent once per
# message, with the message on stdin and in $PARLEY_MESSAGE, and sends what
# it prints as that agent. Several messages are separated by a line holding
# only the ASCII record separator (next, below).
#
# A delivered message is a header between --- lines; a message written
# tag-first ([NARRATIVE] on line one) keeps its tag line and its fields
# after the header, then a blank line, then its text.

CAMPAIGN=campaigns/the-sunken-bell

# field NAME: a field of the message: from its tag-first fields, else from
# its header; without the quotes around it, if any.
field() {
  awk -v k="$1" '
    function value(v) {
      sub(/^ */, "", v)
      if (v ~ /^".*"$/) v = substr(v, 2, length(v) - 2)
      return v
    }
    NR == 1 && $0 == "---" { inhead = 1; next }
    inhead && $0 == "---" { inhead = 0; after = 1; next }
    inhead && !seen && index($0, k ":") == 1 { head = value(substr($0, length(k) + 2)); seen = 1; next }
    after == 1 && /^\[[A-Za-z_]+\]$/ { tag = 1; after = 2; next }
    after == 1 { after = 2 }
    tag && $0 == "" { exit }
    tag && index($0, k ": ") == 1 { found = value(substr($0, length(k) + 3)); exit }
    END { printf "%s", found != "" ? found : head }
  ' "$PARLEY_MESSAGE"
}

# body: the message's text, after its header and tag-first fields.
body() {
  awk '
    NR == 1 && $0 == "---" { inhead = 1; next }
    inhead && $0 == "---" { inhead = 0; after = 1; next }
    inhead { next }
    after == 1 && /^\[[A-Za-z_]+\]$/ { tag = 1; after = 2; next }
    after == 1 { after = 2 }
    tag && $0 == "" { tag = 0; next }
    tag { next }
    { print }
  ' "$PARLEY_MESSAGE"
}

# next: end one message, so that another can follow.
next() {
  printf '\036\n'
}

# state: the directory where a script keeps what it must remember between
# messages (in the campaign's tmp/, which git ignores).
state() {
  [ -d "$CAMPAIGN/tmp/$PARLEY_AGENT" ] || mkdir -p "$CAMPAIGN/tmp/$PARLEY_AGENT"
  printf '%s' "$CAMPAIGN/tmp/$PARLEY_AGENT"
}

# recall NAME DEFAULT: the variable NAME set to what the state's file NAME
# holds, DEFAULT when there is none. (The shell's own read: each program a
# script starts, cat included, costs a process for every message.)
recall() {
  if ! { [ -f "$S/$1" ] && read -r "$1" < "$S/$1"; }; then
    eval "$1=\$2"
  fi
}

# once: make the rest of the script safe to run twice on one message.
# parley hands a message at least once: again when the runner stopped
# before it noted the message handled (kill -9, a power cut). The first
# time, the state's files are copied aside before anything changes, and
# what the script prints is kept once it ends well; the second time, a kept
# answer is printed again (the story in the state moved on since), and a
# state left half changed is put back as it was, so the message is handled
# as if for the first time. All of it stays in the state directory, the
# one place the sandbox lets the script write.
once() {
  kept="$S/.kept"
  id=$PARLEY_MESSAGE_ID
  [ -d "$kept" ] || mkdir "$kept"
  if [ -f "$kept/$id.answer" ]; then
    cat "$kept/$id.answer"
    exit 0
  fi
  if [ -d "$kept/$id.before" ]; then
    rm -f "$S"/*
    set -- "$kept/$id.before"/*
    if [ -f "$1" ]; then cp "$@" "$S/"; fi
  else
    set -- "$kept"/*.before
    if [ -e "$1" ] || [ -e "$kept/copying" ]; then rm -rf "$kept"/*.before "$kept/copying"; fi
    mkdir "$kept/copying"
    set -- "$S"/*
    if [ -f "$1" ]; then cp "$@" "$kept/copying/"; fi
    mv "$kept/copying" "$kept/$id.before"
  fi
  exec 3>&1 >"$kept/$id.part"
  trap 'rc=$?; exec >&3; if [ $rc = 0 ]; then mv "$kept/$id.part" "$kept/$id.answer" && rm -rf "$kept/$id.before" && cat "$kept/$id.answer"; fi; exit $rc' EXIT
}

# shutdown: approve a shutdown request (the team lead's, at the end).
shutdown() {
  printf -- '---\nto: %s\ntype: shutdown_response\nrequest_id: %s\napprove: true\n---\n%s\n' "$PARLEY_FROM" "$(field request_id)" "$1"
}

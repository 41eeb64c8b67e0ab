#!/bin/sh
# A researcher: answers the question it is given.
. agents/lib.sh
envelope research_result research_complete
printf 'topic: "%s"\nverified: true\n---\n' "$(field topic)"
case "$(field topic)" in
Which*) printf 'ENOSPC and EIO are transient: retry them; ENOENT (a mailbox removed) is not.\n' ;;
*) printf 'Double from 1 s to 1 min, with 20%% jitter.\n' ;;
esac

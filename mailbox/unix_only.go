//go:build !unix

package mailbox

// parley runs on Unix only: Linux and macOS are built and vetted, the BSDs
// may work. It relies on flock(2), process groups, O_NOFOLLOW opens and
// fsync as Unix defines them. A build for any other system stops at the
// line below, with an error that names the reason.

var _ = parley_builds_only_on_unix_linux_or_macos

package workspace

import (
	"slices"
	"strings"

	"github.com/parley-dev/parley/mailbox"
)

// overlaps reports whether a and b have a name in common.
func overlaps(a, b []string) bool {
	for _, x := range a {
		if slices.Contains(b, x) {
			return true
		}
	}
	return false
}

// appendNew appends s to list unless it is there already.
func appendNew(list []string, s string) []string {
	if slices.Contains(list, s) {
		return list
	}
	return append(list, s)
}

// TypeOf returns a message's type as routes, timeouts and stop_on name
// it: without the brackets of a tag ("[SESSION_END]" is SESSION_END).
func TypeOf(m *mailbox.Message) string {
	typ, _ := m.Header().Get("type")
	return strings.Trim(typ, "[] ")
}

// Package examples holds parley's runnable example workspaces, embedded in
// the binary so that `parley demo` can set one up anywhere.
package examples

import "embed"

// Teams is the examples/teams workspace: a lead, a researcher and a
// writer, each a shell script, under teams/.
//
//go:embed all:teams
var Teams embed.FS

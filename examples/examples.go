// Package examples holds parley's runnable example workspaces, embedded in
// the binary so that `parley demo` can set one up anywhere.
package examples

import "embed"

// Teams is the examples/teams workspace: a lead, a researcher and a
// writer, each a shell script, under teams/.
//
//go:embed all:teams
var Teams embed.FS

// DnD is the examples/dnd workspace: a D&D table whose game master,
// narrator and AI players are shell scripts, with a campaign, under dnd/.
//
//go:embed all:dnd
var DnD embed.FS

// Pipeline is the examples/pipeline workspace: the dev pipeline, with the
// built-in orchestrator and an architect, researchers, workers, a
// reviewer and an auditor that are shell scripts, under pipeline/.
//
//go:embed all:pipeline
var Pipeline embed.FS

package main

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/urfave/cli/v2"
)

func versionCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:  "version",
		Usage: "print parley's version: the module version, the commit it was built from (and whether it had uncommitted changes), the Go release",
		Description: "`parley --version` prints the same. `go install` of a tagged module gives\n" +
			"its tag; a build in a git checkout, a version made from the commit (+dirty\n" +
			"with uncommitted changes); `go run`, `go test` and -buildvcs=false builds\n" +
			"know less, and print what they have (\"(devel)\").",
		Flags: []cli.Flag{jsonFlag},
		Action: func(c *cli.Context) error {
			if err := noArgs(c); err != nil {
				return err
			}
			return runVersion(e, buildVersion(), c.Bool("json"))
		},
	}
}

// versionInfo is what a binary knows of how it was built.
type versionInfo struct {
	Version  string `json:"version"`            // the module's version, or "(devel)"
	Revision string `json:"revision,omitempty"` // the commit it was built from
	Time     string `json:"time,omitempty"`     // the commit's time
	Modified bool   `json:"modified"`           // built with uncommitted changes
	Go       string `json:"go"`                 // the Go release that built it
	Platform string `json:"platform"`           // GOOS/GOARCH
}

// buildVersion reads the version from the build information the Go
// toolchain puts in every binary.
func buildVersion() versionInfo {
	v := versionInfo{Version: "(devel)", Go: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return v
	}
	if bi.Main.Version != "" {
		v.Version = bi.Main.Version
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			v.Revision = s.Value
		case "vcs.time":
			v.Time = s.Value
		case "vcs.modified":
			v.Modified = s.Value == "true"
		}
	}
	return v
}

// runVersion prints v: "parley VERSION" on the first line, then the
// commit when there is one, then the Go release.
func runVersion(e *env, v versionInfo, asJSON bool) error {
	if asJSON {
		return e.printJSON(v)
	}
	fmt.Fprintf(e.stdout, "parley %s\n", v.Version)
	if v.Revision != "" {
		line := "commit " + v.Revision
		if v.Time != "" {
			line += " (" + v.Time + ")"
		}
		if v.Modified {
			line += ", with uncommitted changes"
		}
		fmt.Fprintln(e.stdout, line)
	}
	_, err := fmt.Fprintf(e.stdout, "%s %s\n", v.Go, v.Platform)
	return err
}

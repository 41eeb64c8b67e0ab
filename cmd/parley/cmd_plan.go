package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/parley-dev/parley/internal/textfile"
	"github.com/parley-dev/parley/plans"
)

func planCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:  "plan",
		Usage: "read, check and tick the dev pipeline's plan files (plans/NAME.md)",
		Subcommands: []*cli.Command{
			{
				Name:      "show",
				Usage:     "print a plan's waves and steps with their ticks, and its progress; without FILE, the plans in plans/",
				ArgsUsage: "[FILE]",
				Flags:     []cli.Flag{jsonFlag},
				Action: func(c *cli.Context) error {
					if err := argCount(c, 0, 1, "a FILE"); err != nil {
						return err
					}
					if !c.Args().Present() {
						return runPlanList(c, e)
					}
					p, _, err := readPlan(c, c.Args().First())
					if err != nil {
						return err
					}
					if c.Bool("json") {
						return e.printJSON(planJSON(p))
					}
					printPlan(e, p)
					return nil
				},
			},
			{
				Name:      "check",
				Usage:     "check plan files: frontmatter, sections, waves and their dependencies, steps (exit 1 on problems, each as FILE:LINE)",
				ArgsUsage: "FILE...",
				Flags:     []cli.Flag{jsonFlag},
				Action: func(c *cli.Context) error {
					if err := argCount(c, 1, -1, "a FILE"); err != nil {
						return err
					}
					var all []plans.Problem
					for _, arg := range c.Args().Slice() {
						p, _, err := readPlan(c, arg)
						if err != nil {
							return err
						}
						probs := p.Check()
						all = append(all, probs...)
						if c.Bool("json") {
							continue
						}
						for _, pr := range probs {
							fmt.Fprintln(e.stdout, printable(pr.Error()))
						}
						if len(probs) == 0 {
							pr := p.Progress()
							fmt.Fprintf(e.stdout, "%s: ok (%d %s, %d %s)\n", p.Path, len(p.Waves), plural(len(p.Waves), "wave", "waves"), pr.Total, plural(pr.Total, "step", "steps"))
						}
					}
					if c.Bool("json") {
						if all == nil {
							all = []plans.Problem{}
						}
						if err := e.printJSON(all); err != nil {
							return err
						}
					}
					if len(all) > 0 {
						return errSilent
					}
					return nil
				},
			},
			{
				Name:      "tick",
				Usage:     "mark a step done: its `- [ ]` becomes `- [x]`, nothing else in the file changes",
				ArgsUsage: "FILE STEP",
				Action: func(c *cli.Context) error {
					if err := exactArgs(c, 2, "a FILE and a STEP number"); err != nil {
						return err
					}
					n, err := strconv.Atoi(strings.TrimPrefix(strings.ToLower(c.Args().Get(1)), "step"))
					if err != nil || n < 0 {
						return argsError(c, "plan tick: %q is not a step number", c.Args().Get(1))
					}
					read, path, err := readPlan(c, c.Args().First())
					if err != nil {
						return err
					}
					p, changed, err := plans.Tick(path, n)
					var ambiguous *plans.AmbiguousStepError
					var conflict *textfile.ConflictError
					switch {
					case errors.As(err, &conflict):
						conflict.Path = read.Path // as the person named it
						return conflict
					case errors.As(err, &ambiguous):
						ambiguous.Path = read.Path // as the person named it
						return fmt.Errorf("%w: ticked none; give each step its own number, then parley plan check %s", ambiguous, read.Path)
					case errors.Is(err, plans.ErrNoStep):
						if probs := read.Check(); len(probs) > 0 {
							// The step may be a line the plan's problems kept from being read.
							return fmt.Errorf("%s has no step %d; %s", read.Path, n, problemsNote(read.Path, len(probs)))
						}
						return fmt.Errorf("%s has no step %d", read.Path, n)
					case err != nil:
						return err
					}
					p.Path = read.Path
					s := p.Step(n) // the only one: Tick refuses a number two steps have
					pr := p.Progress()
					w, i := p.WaveOf(s)
					wp := pr.Waves[i]
					what := "ticked"
					if !changed {
						what = "already done:"
					}
					line := fmt.Sprintf("%s step %d: %s (wave %d: %d/%d; plan: %d/%d", what, n, s.Title, w.Number, wp.Done, wp.Total, pr.Done, pr.Total)
					if probs := p.Check(); len(probs) > 0 {
						line += "; " + problemsNote(p.Path, len(probs))
					}
					fmt.Fprintln(e.stdout, printable(line+")"))
					return nil
				},
			},
		},
	}
}

// readPlan reads the plan FILE names: a path, or the name of a plan in the
// workspace's plans/ (with or without .md). It returns the plan, named as
// the user wrote it, and the path it was read from.
func readPlan(c *cli.Context, arg string) (*plans.Plan, string, error) {
	path, name := arg, arg
	if _, err := os.Stat(arg); errors.Is(err, fs.ErrNotExist) && !strings.ContainsRune(arg, filepath.Separator) {
		if ws, werr := openWorkspace(c); werr == nil {
			for _, n := range []string{arg, arg + ".md"} {
				try := filepath.Join(ws.Root, plans.Dir, n)
				if _, err := os.Stat(try); err == nil {
					path, name = try, ws.Short(try)
					break
				}
			}
		}
	}
	p, err := plans.Read(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, "", fmt.Errorf("no plan %s", arg)
		}
		return nil, "", err
	}
	p.Path = name
	return p, path, nil
}

// runPlanList prints the plans of the workspace's plans/, a line each.
func runPlanList(c *cli.Context, e *env) error {
	ws, err := openWorkspace(c)
	if err != nil {
		return err
	}
	ps, err := plans.List(filepath.Join(ws.Root, plans.Dir))
	if err != nil {
		return err
	}
	if c.Bool("json") {
		out := []any{}
		for _, p := range ps {
			p.Path = ws.Short(p.Path)
			out = append(out, planJSON(p))
		}
		return e.printJSON(out)
	}
	if len(ps) == 0 {
		fmt.Fprintf(e.stdout, "no plans in %s/\n", plans.Dir)
		return nil
	}
	for _, p := range ps {
		pr := p.Progress()
		file := ws.Short(p.Path)
		line := fmt.Sprintf("%s  %s  %d/%d steps", file, orDash(p.Status), pr.Done, pr.Total)
		if a := ahead(file, planAhead(p)); a != "" {
			line += "  " + a
		}
		fmt.Fprintln(e.stdout, printable(line))
	}
	return nil
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// nextSteps says which steps come next: "wave 2, steps 3, 4, 5".
func nextSteps(w *plans.Wave, steps []plans.Step) string {
	var nums []int
	for _, s := range steps {
		nums = append(nums, s.Number)
	}
	return fmt.Sprintf("wave %d, %s %s", w.Number, plural(len(nums), "step", "steps"), joinInts(nums))
}

func joinInts(ns []int) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ", ")
}

// upNext is what comes next for a plan, as plans.Plan.Ahead decides it:
// the steps to do next ("wave 2, steps 3, 4"), or, for a plan with
// problems, how many it has (then no step is next).
type upNext struct {
	Next     string
	Problems int
}

// planAhead reads what comes next for p.
func planAhead(p *plans.Plan) upNext {
	probs, w, steps := p.Ahead()
	if len(probs) > 0 {
		return upNext{Problems: len(probs)}
	}
	if w == nil {
		return upNext{}
	}
	return upNext{Next: nextSteps(w, steps)}
}

// ahead says what comes next for the plan in file, as every view of a
// plan's progress says it (plan show, the list of plans, parley
// pipeline): "next: wave 2, steps 3, 4"; for a plan with problems, in
// its place, that it has them and where they are listed; "" when every
// wave is done.
func ahead(file string, u upNext) string {
	switch {
	case u.Problems > 0:
		return problemsNote(file, u.Problems)
	case u.Next != "":
		return "next: " + u.Next
	}
	return ""
}

// problemsNote says that the plan in file has n problems, and which
// command lists them.
func problemsNote(file string, n int) string {
	return fmt.Sprintf("the plan has %d %s: parley plan check %s", n, plural(n, "problem", "problems"), file)
}

// printPlan prints a plan: its task, status, waves with their steps and
// ticks, and its progress.
func printPlan(e *env, p *plans.Plan) {
	var b strings.Builder
	task := p.Task
	if task == "" {
		task = p.Title
	}
	fmt.Fprintf(&b, "%s: %s\n", p.Path, task)
	tags := "none"
	if len(p.RiskTags) > 0 {
		tags = strings.Join(p.RiskTags, ", ")
	}
	tier := "-"
	if p.Tier >= 0 {
		tier = strconv.Itoa(p.Tier)
	}
	fmt.Fprintf(&b, "status %s, tier %s, dated %s; risk tags: %s\n", orDash(p.Status), tier, orDash(p.Date), tags)
	pr := p.Progress()
	for i, w := range p.Waves {
		deps := ""
		if len(w.Depends) > 0 {
			var ds []string
			for _, d := range w.Depends {
				ds = append(ds, strconv.Itoa(d))
			}
			deps = " (depends on wave " + strings.Join(ds, ", ") + ")"
		}
		title := ""
		if w.Title != "" {
			title = " — " + w.Title
		}
		fmt.Fprintf(&b, "wave %d%s%s: %d/%d\n", w.Number, title, deps, pr.Waves[i].Done, pr.Waves[i].Total)
		for _, s := range w.Steps {
			box := " "
			if s.Done {
				box = "x"
			}
			fmt.Fprintf(&b, "  [%s] step %d: %s\n", box, s.Number, s.Title)
		}
	}
	fmt.Fprintf(&b, "progress: %d/%d %s; ", pr.Done, pr.Total, plural(pr.Total, "step", "steps"))
	switch a := ahead(p.Path, planAhead(p)); {
	case a != "":
		b.WriteString(a + "\n")
	case pr.Total == 0:
		b.WriteString("no steps\n")
	default:
		b.WriteString("every wave is done\n")
	}
	fmt.Fprint(e.stdout, printableLines(b.String()))
}

// planJSON is a plan as `plan show --json` prints it.
func planJSON(p *plans.Plan) any {
	probs, _, steps := p.Ahead()
	if probs == nil {
		probs = []plans.Problem{}
	}
	var next []int // null for a plan with problems, as for one done
	for _, s := range steps {
		next = append(next, s.Number)
	}
	return struct {
		*plans.Plan
		Progress plans.Progress  `json:"progress"`
		Next     []int           `json:"next"`
		Problems []plans.Problem `json:"problems"`
	}{p, p.Progress(), next, probs}
}

package main

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/parley-dev/parley/runner/workspace"
)

func usageCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:  "usage",
		Usage: "show the tokens the openai agents' models used, per agent and per session, their cost at the prices of parley.yaml, and the budgets",
		Description: "The figures are the endpoints' own usage counts, read from the journal's model\n" +
			"entries. A session is a run of the runner; budgets count the latest one.",
		Flags: []cli.Flag{jsonFlag},
		Action: func(c *cli.Context) error {
			if err := noArgs(c); err != nil {
				return err
			}
			ws, err := e.openWorkspaceToRead(c)
			if err != nil {
				return err
			}
			return runUsage(e, ws, c.Bool("json"))
		},
	}
}

// usageReport is what parley usage prints.
type usageReport struct {
	*workspace.UsageReport
	Budget workspace.Budget           `json:"session_budget,omitzero"`
	Agents []agentUsage               `json:"agents"`
	Prices map[string]workspace.Price `json:"prices,omitempty"`
}

type agentUsage struct {
	workspace.AgentUsage
	Model  string           `json:"model,omitempty"`
	Budget workspace.Budget `json:"budget,omitzero"`
}

// modelUsage is the usage of the workspace's models, with each openai
// agent of parley.yaml listed, whether it called its model or not.
func modelUsage(ws *workspace.Workspace) (*usageReport, error) {
	u, err := ws.Usage()
	if err != nil {
		return nil, err
	}
	rep := &usageReport{UsageReport: u, Budget: ws.Config.Budget, Prices: ws.Config.Prices}
	seen := map[string]bool{}
	for _, a := range ws.Config.Agents {
		if a.Model == nil {
			continue
		}
		au, _ := u.Agent(a.Name)
		au.Agent = a.Name
		rep.Agents = append(rep.Agents, agentUsage{AgentUsage: au, Model: a.Model.Model, Budget: a.Budget})
		seen[a.Name] = true
	}
	for _, au := range u.Agents {
		if !seen[au.Agent] { // an agent no longer in parley.yaml
			rep.Agents = append(rep.Agents, agentUsage{AgentUsage: au})
		}
	}
	return rep, nil
}

func runUsage(e *env, ws *workspace.Workspace, asJSON bool) error {
	rep, err := modelUsage(ws)
	if err != nil {
		return err
	}
	if asJSON {
		return e.printJSON(rep)
	}
	if len(rep.Agents) == 0 {
		fmt.Fprintf(e.stdout, "no openai agents in %s, and no model calls in the journal\n", workspace.ConfigFile)
		return nil
	}
	w := e.stdout
	width := len("total")
	for _, a := range rep.Agents {
		width = max(width, len(a.Agent))
	}
	fmt.Fprintf(w, "%-*s  %-16s  %5s  %6s  %10s  %10s  %10s  %s\n", width, "AGENT", "MODEL", "CALLS", "FAILED", "TOKENS IN", "TOKENS OUT", "COST", "BUDGET (this session)")
	for _, a := range rep.Agents {
		// A row per model the agent called (its cost is that model's),
		// and one for the model parley.yaml names when it has not
		// called it yet; the agent's budget on its first.
		for i, m := range a.rows() {
			budget := ""
			if i == 0 {
				budget = budgetText(a.Budget, a.Session)
			}
			line := fmt.Sprintf("%-*s  %-16s  %5d  %6d  %10d  %10d  %10s  %s", width, a.Agent, dash(m.Model), m.Calls, m.Failed, m.TokensIn, m.TokensOut, cost(m.Cost, rep.Prices), budget)
			fmt.Fprintln(w, strings.TrimRight(line, " "))
		}
	}
	t := rep.Total
	fmt.Fprintf(w, "%-*s  %-16s  %5d  %6d  %10d  %10d  %10s  %s\n", width, "total", "", t.Calls, t.Failed, t.TokensIn, t.TokensOut, cost(t.Cost, rep.Prices), budgetText(rep.Budget, latest(rep.UsageReport)))
	if len(rep.Sessions) > 0 {
		fmt.Fprintln(w)
		fmt.Fprintf(w, "%-38s  %5s  %10s  %10s  %10s\n", "SESSION", "CALLS", "TOKENS IN", "TOKENS OUT", "COST")
		for _, s := range rep.Sessions {
			name := dash(s.Session)
			if s.Session == rep.Latest {
				name += " (latest)"
			}
			fmt.Fprintf(w, "%-38s  %5d  %10d  %10d  %10s\n", name, s.Calls, s.TokensIn, s.TokensOut, cost(s.Cost, rep.Prices))
		}
	}
	printModelErrors(w, rep)
	printInterrupted(w, rep)
	return nil
}

// printInterrupted says which agents' calls a stop cut short: the
// endpoint got them, and may have counted tokens the figures above lack.
func printInterrupted(w io.Writer, rep *usageReport) {
	var parts []string
	for _, a := range rep.Agents {
		if a.Interrupted > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", a.Agent, a.Interrupted))
		}
	}
	if len(parts) > 0 {
		fmt.Fprintf(w, "\ninterrupted calls (parley run stopped while they were in flight; counted as calls and failed, their tokens unknown, counted as 0): %s\n", strings.Join(parts, ", "))
	}
}

// rows returns an agent's usage per model it called, then, when it has
// not called it yet, the model parley.yaml names now, with nothing used.
func (a agentUsage) rows() []workspace.ModelUsage {
	rows := slices.Clone(a.Models)
	if len(rows) == 0 || a.Model != "" && !slices.ContainsFunc(rows, func(m workspace.ModelUsage) bool { return m.Model == a.Model }) {
		rows = append(rows, workspace.ModelUsage{Model: a.Model})
	}
	return rows
}

// models says which models an agent called: the one parley.yaml names
// when it called that one alone, else each, and the one named now.
func (a agentUsage) models() string {
	rows := a.rows()
	if len(rows) == 1 {
		return dash(rows[0].Model)
	}
	names := make([]string, 0, len(rows))
	for _, m := range a.Models {
		names = append(names, dash(m.Model))
	}
	if a.Model == "" {
		return strings.Join(names, ", ")
	}
	return strings.Join(names, ", ") + " (now " + a.Model + ")"
}

// latest returns the latest session's usage.
func latest(u *workspace.UsageReport) workspace.Usage {
	for _, s := range u.Sessions {
		if s.Session == u.Latest {
			return s.Usage
		}
	}
	return workspace.Usage{}
}

// printModelErrors says which agents' latest model call failed, and why:
// an endpoint unreachable shows here, and in parley status.
func printModelErrors(w io.Writer, rep *usageReport) {
	var lines []string
	for _, a := range rep.Agents {
		if a.LastError != "" {
			lines = append(lines, fmt.Sprintf("  %s: %s (%s)", a.Agent, printable(a.LastError), a.LastErrorAt))
		}
	}
	if len(lines) > 0 {
		fmt.Fprintf(w, "\nlatest model call failed:\n%s\n", strings.Join(lines, "\n"))
	}
}

// cost formats a cost; "-" without a price table.
func cost(c float64, prices map[string]workspace.Price) string {
	if len(prices) == 0 {
		return "-"
	}
	return strconv.FormatFloat(c, 'f', 4, 64)
}

// budgetText says a budget and what of it the session used; "-" for none.
func budgetText(b workspace.Budget, used workspace.Usage) string {
	var parts []string
	if b.Tokens > 0 {
		parts = append(parts, fmt.Sprintf("%d of %d tokens", used.Tokens(), b.Tokens))
	}
	if b.Cost > 0 {
		parts = append(parts, fmt.Sprintf("%.4f of %.2f", used.Cost, b.Cost))
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, ", ")
}

package workspace

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/parley-dev/parley/campaigns"
	"github.com/parley-dev/parley/internal/spell"
	"github.com/parley-dev/parley/mailbox"
	"github.com/parley-dev/parley/skills"
)

// Lint returns what parley says about the workspace when it starts
// without refusing to start: an agent's role no skill and no route knows
// (see UnknownRoles); a role no agent has that a program or a built-in
// handler of the workspace would send to (see strandedRoles); a route matching a type no skill defines, or
// a field none of the types it matches has; a route to a role nobody holds, or from one; and
// a route that sends a type to agents its protocol does not list as
// recipients. Such a route is the workspace owner's decision, and its
// recipients get the message; the warning names the line of the protocol
// it overrides. Besides: a campaign: that names no campaign; an agent's
// character: that names no sheet of the campaign's party (see
// UnknownCharacters); an AI player at a table with a team lead whose
// accepts: keep it from writing its journal (see Unjournaled). An error
// is returned only when the skills cannot be read.
func (w *Workspace) Lint() ([]string, error) {
	protocol, err := w.Protocol()
	if err != nil {
		return nil, err
	}
	var out []string
	warn := func(r *Route, key, format string, args ...any) {
		out = append(out, fmt.Sprintf("%s:%d: %s: %s", ConfigFile, r.Line, key, fmt.Sprintf(format, args...)))
	}
	held := w.RoleHeld
	unheld := map[string][]string{} // skill -> roles
	var order []string
	for _, u := range w.strandedRoles(protocol) {
		if unheld[u.Skill] == nil {
			order = append(order, u.Skill)
		}
		unheld[u.Skill] = append(unheld[u.Skill], u.Role)
	}
	for _, u := range w.UnknownRoles(protocol) {
		out = append(out, u.String())
	}
	if w.Config.Campaign != "" {
		// A misspelt name: every campaign command, the team lead and
		// the scribe fail on it, each with no word of parley.yaml.
		if _, err := campaigns.Open(w.Root, w.Config.Campaign); errors.Is(err, campaigns.ErrNotFound) {
			out = append(out, w.CampaignConfigError(err).Error())
		}
	}
	for _, u := range w.UnknownCharacters() {
		out = append(out, u.String())
	}
	out = append(out, w.Unjournaled(protocol)...)
	for _, sk := range order {
		roles := unheld[sk]
		out = append(out, fmt.Sprintf("%s: skills: %s names %s no agent has (%s): what it sends to %s has nowhere to go unless named in to:", ConfigFile, sk, plural(len(roles), "a role", "roles"), strings.Join(roles, ", "), plural(len(roles), "it", "them")))
	}
	for i := range w.Config.Routes {
		r := &w.Config.Routes[i]
		for _, role := range r.FromRole {
			if !held(role) {
				warn(r, r.Key+".match.from_role", "no agent has the role %q: the route matches nothing", role)
			}
		}
		for _, t := range r.targets() {
			if role, ok := strings.CutPrefix(t, "role:"); ok && !held(role) {
				warn(r, r.Key, "no agent has the role %q: the route sends nothing to it", role)
			}
		}
		if protocol == nil {
			continue
		}
		// A route for any type matches informal messages too, which may
		// carry any field: only the fields of the types named are known.
		types := w.lintTypes(r, protocol, warn)
		for _, field := range r.fieldNames() {
			if len(r.Type) > 0 && !slices.ContainsFunc(types, func(t *skills.Type) bool { return hasField(t, field) }) {
				warn(r, r.Key, "no type it matches (%s) has a field %q: the route applies only to messages that carry it anyway", strings.Join(r.Type, ", "), field)
			}
		}
		w.lintRecipients(r, protocol, warn)
	}
	return out, nil
}

// UnheldRole is a role a skill names that no agent of the workspace has.
type UnheldRole struct {
	Role  string `json:"role"`
	Skill string `json:"skill"` // the skill's name
}

// UnheldRoles returns the roles the workspace's skills name that no agent
// has, in the order of the skills; nil without skills.
func (w *Workspace) UnheldRoles(protocol *skills.Set) []UnheldRole {
	if protocol == nil {
		return nil
	}
	var out []UnheldRole
	seen := map[string]bool{}
	for _, sk := range protocol.Skills {
		for _, role := range sk.Roles() {
			if seen[role] || w.RoleHeld(role) {
				continue
			}
			seen[role] = true
			out = append(out, UnheldRole{Role: role, Skill: sk.Name})
		}
	}
	return out
}

// strandedRoles returns the roles of UnheldRoles that an agent a program
// or built-in handler plays here would send to: a type or signal of the protocol that one of
// its roles sends (or any role), to recipients none of whom an agent has
// (a role of the protocol, not every agent). Such a program's message, an
// escalation of the team lead say, would be refused with no person there
// to read why. A role only people would send to is left out: a table of
// people without a team lead is a table, and `parley send` refuses what
// would reach nobody at once, with the reason and what to do.
func (w *Workspace) strandedRoles(protocol *skills.Set) []UnheldRole {
	if protocol == nil {
		return nil
	}
	// The agents a program or built-in handler plays here. What an agent
	// of another workspace sends to a role is routed there, by that
	// workspace's roles: never here.
	var programs []string
	for _, a := range w.Config.Agents {
		if a.Driven() {
			programs = append(programs, a.Name)
		}
	}
	if len(programs) == 0 {
		return nil
	}
	anyAgent := func(r string) bool { return skills.Generic([]string{r}) }
	sentByProgram := func(senders []string) bool {
		return slices.ContainsFunc(programs, func(a string) bool {
			return len(senders) == 0 || slices.ContainsFunc(senders, anyAgent) || w.HasRole(a, senders...)
		})
	}
	stranded := map[string]bool{}
	strand := func(senders, recipients []string) {
		if len(recipients) == 0 || slices.ContainsFunc(recipients, anyAgent) || slices.ContainsFunc(recipients, w.RoleHeld) || !sentByProgram(senders) {
			return
		}
		for _, r := range recipients {
			stranded[r] = true
		}
	}
	for _, sk := range protocol.Skills {
		for _, t := range sk.Types {
			strand(t.Senders, t.Recipients)
		}
		for _, sg := range sk.Signals {
			if len(sg.Senders) == 0 {
				// Its table names no sender (dev-pipeline's execute,
				// review...: the orchestrator's, by the types that
				// carry them): who sends it is the types' to say.
				continue
			}
			strand(sg.Senders, sg.Recipients)
		}
	}
	var out []UnheldRole
	for _, u := range w.UnheldRoles(protocol) {
		if stranded[u.Role] {
			out = append(out, u)
		}
	}
	return out
}

// UnknownRole is a role an agent is given in parley.yaml that neither the
// workspace's skills nor its routes name: most likely a misspelling
// ("plyer"), which would leave the agent out of what the protocol sends
// to the role it meant. It is a warning, not an error: a role of the
// workspace's own is legitimate, and is known once a route uses it.
type UnknownRole struct {
	Agent   string `json:"agent"`
	Role    string `json:"role"`
	Line    int    `json:"line"`              // of role: in parley.yaml
	Key     string `json:"key"`               // agents[2].role
	Nearest string `json:"nearest,omitempty"` // the known role it is closest to
}

// String says what is wrong as file:line: key: message, with the nearest
// known role when there is one.
func (u UnknownRole) String() string {
	hint := ""
	if u.Nearest != "" {
		hint = fmt.Sprintf(" (did you mean %q?)", u.Nearest)
	}
	return fmt.Sprintf("%s:%d: %s: no skill of this workspace and no route names the role %q%s: no message is routed to %s by that role", ConfigFile, u.Line, u.Key, u.Role, hint, u.Agent)
}

// HumanRole is a role parley itself gives a meaning to, whatever the
// skills: the person questions and escalations go to (the pipeline
// orchestrator's, a session's end).
const HumanRole = "human"

// TeamLeadRole is the role of the team lead, which parley itself gives a
// meaning to, whatever the skills: `parley stop` asks from it, a seat at
// a table speaks as it.
const TeamLeadRole = "team-lead"

// UnknownRoles returns the roles agents are given that no skill of the
// workspace, no route and parley itself (HumanRole, TeamLeadRole) knows, in the order of parley.yaml; nil when the
// workspace has no skills (then every role is its own). A route knows a
// role it matches (from_role) or sends to (role:NAME, or a bare name that
// is no agent's).
func (w *Workspace) UnknownRoles(protocol *skills.Set) []UnknownRole {
	if protocol == nil || len(protocol.Skills) == 0 {
		return nil
	}
	known := []string{HumanRole, TeamLeadRole}
	for _, sk := range protocol.Skills {
		for _, role := range sk.Roles() {
			known = appendNew(known, role)
		}
	}
	for _, r := range w.Config.Routes {
		for _, role := range r.FromRole {
			known = appendNew(known, role)
		}
		for _, t := range r.targets() {
			if _, ok := w.Agent(t); !ok {
				known = appendNew(known, strings.TrimPrefix(t, "role:"))
			}
		}
	}
	var out []UnknownRole
	for _, a := range w.Config.Agents {
		for _, role := range a.Roles {
			if slices.Contains(known, role) || role == a.Name {
				continue
			}
			line, key := a.RolesLine, a.RolesKey
			if line == 0 {
				line, key = a.Line, a.Key+".role"
			}
			out = append(out, UnknownRole{Agent: a.Name, Role: role, Line: line, Key: key, Nearest: spell.Nearest(role, known, 2)})
		}
	}
	return out
}

// RoleHeld reports whether an agent has the role.
func (w *Workspace) RoleHeld(role string) bool {
	return slices.ContainsFunc(w.AgentNames(), func(a string) bool { return w.HasRole(a, role) })
}

// AtTable reports whether the workspace is a D&D table: it has a
// campaign (the one parley.yaml names, else its only one, as
// campaigns.Find finds it) and an agent with the role team-lead. It is
// the one place that decides: the web view's Seat page and its answers
// ask it.
func (w *Workspace) AtTable() bool {
	if _, err := campaigns.Find(w.Root, w.Config.Campaign); err != nil {
		return false
	}
	return w.RoleHeld(TeamLeadRole)
}

// lintTypes returns the types of the protocol a route names, and warns
// about names no skill defines.
func (w *Workspace) lintTypes(r *Route, protocol *skills.Set, warn func(*Route, string, string, ...any)) []*skills.Type {
	var types []*skills.Type
	for _, name := range r.Type {
		t, _, ok := protocol.Type(name)
		if !ok {
			warn(r, r.Key+".match.type", "no skill of this workspace defines %s (types: %s): the route matches only informal messages of that type", name, strings.Join(protocol.TypeNames(), ", "))
			continue
		}
		types = append(types, t)
	}
	return types
}

// lintRecipients warns when a route sends a type, with to:, to agents
// whose roles its protocol does not list among the type's recipients. A
// cc: is a copy the workspace's owner asked for (the game master sees the
// players' talk): it is not warned about.
func (w *Workspace) lintRecipients(r *Route, protocol *skills.Set, warn func(*Route, string, string, ...any)) {
	for _, name := range r.Type {
		t, skill, ok := protocol.Type(name)
		if !ok || len(t.Recipients) == 0 || slices.Contains(t.Recipients, "*") || slices.Contains(t.Recipients, "any") {
			continue
		}
		for _, agent := range w.staticTargets(r.To) {
			if w.HasRole(agent, t.Recipients...) {
				continue
			}
			line := t.RecipientLine
			if line == 0 {
				line = t.Line
			}
			warn(r, r.Key, "sends %s to %s (%s), which %s:%d does not list among its recipients (%s): delivered, as the route says", displayType(t), agent, strings.Join(w.Roles(agent), ", "), w.Short(skill.Source), line, t.RecipientText)
		}
	}
}

// staticTargets returns the agents route targets send to whatever the
// message says: their names, roles and "*" (not $field or reply).
func (w *Workspace) staticTargets(targets []string) []string {
	var out []string
	for _, t := range targets {
		switch {
		case t == "reply" || fieldTarget.MatchString(t):
		case t == "*":
			for _, a := range w.AgentNames() {
				out = appendNew(out, a)
			}
		default:
			if _, ok := w.Agent(t); ok && !strings.HasPrefix(t, "role:") {
				out = appendNew(out, t)
				continue
			}
			role := strings.TrimPrefix(t, "role:")
			for _, a := range w.AgentNames() {
				if w.HasRole(a, role) {
					out = appendNew(out, a)
				}
			}
		}
	}
	return out
}

// fieldNames returns the message fields a route reads: those it matches
// on and those its $field targets name.
func (r *Route) fieldNames() []string {
	var out []string
	for k := range r.Fields {
		out = appendNew(out, k)
	}
	slices.Sort(out)
	for _, t := range r.targets() {
		if fieldTarget.MatchString(t) {
			out = appendNew(out, t[1:])
		}
	}
	return out
}

// hasField reports whether a type has a field of this name, at its top
// level or as the first part of a nested one.
func hasField(t *skills.Type, name string) bool {
	for _, f := range t.Fields {
		top, _, _ := strings.Cut(strings.TrimSuffix(strings.SplitN(f.Name, "[", 2)[0], "."), ".")
		if f.Name == name || top == name {
			return true
		}
	}
	return false
}

func displayType(t *skills.Type) string {
	if t.Tagged {
		return "[" + t.Name + "]"
	}
	return t.Name
}

// plural returns one or many as n says.
func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// CampaignConfigError says that err is about the campaign parley.yaml
// names, at the line of its campaign: key.
func (w *Workspace) CampaignConfigError(err error) error {
	return fmt.Errorf("%s:%d: campaign: %w", ConfigFile, w.Config.CampaignLine, err)
}

// UnknownCharacter is an agent's character: in parley.yaml that names no
// sheet of the party of the workspace's campaign: most likely a
// misspelling (tilda-branock), which the session would start with, a
// character nobody has a sheet of, that the tools, the journal and the
// players' isolation cannot find. A warning when the runner starts and
// in parley status; an error of parley campaign check.
type UnknownCharacter struct {
	Agent     string `json:"agent"`
	Character string `json:"character"`
	Campaign  string `json:"campaign"`
	Line      int    `json:"line"`              // of character: in parley.yaml
	Key       string `json:"key"`               // agents[5].character
	Nearest   string `json:"nearest,omitempty"` // the sheet it is closest to
	// Sheets are the characters the party has sheets of.
	Sheets []string `json:"sheets"`
}

// String says what is wrong as file:line: key: message, with the nearest
// sheet when there is one, else the party's sheets.
func (u UnknownCharacter) String() string {
	hint := fmt.Sprintf(" (sheets: %s)", strings.Join(u.Sheets, ", "))
	if u.Nearest != "" {
		hint = fmt.Sprintf(" (did you mean %s?)", u.Nearest)
	}
	return fmt.Sprintf("%s:%d: %s: campaign %s has no sheet of %q%s: %s plays a character nobody has a sheet of (%s/%s/%s/%s.md)", ConfigFile, u.Line, u.Key, u.Campaign, u.Character, hint, u.Agent, campaigns.Dir, u.Campaign, campaigns.PartyDir, u.Character)
}

// UnknownCharacters returns the agents whose character: names no sheet
// of the party of the workspace's campaign (the one parley.yaml names,
// else its only one, as campaigns.Find finds it), in the order of
// parley.yaml. A workspace with no campaign yet, or a party with no
// sheet yet (a campaign just made, its sheets still to come), has
// nothing to compare with: nil.
func (w *Workspace) UnknownCharacters() []UnknownCharacter {
	camp, err := campaigns.Find(w.Root, w.Config.Campaign)
	if err != nil {
		return nil
	}
	sheets, err := camp.Characters()
	if err != nil || len(sheets) == 0 {
		return nil // a party/ that cannot be read is campaign check's to say
	}
	var out []UnknownCharacter
	for _, a := range w.Config.Agents {
		if a.Character == "" || slices.Contains(sheets, a.Character) {
			continue
		}
		line := a.CharacterLine
		if line == 0 {
			line = a.Line
		}
		out = append(out, UnknownCharacter{Agent: a.Name, Character: a.Character, Campaign: camp.Name, Line: line, Key: a.Key + ".character",
			Nearest: spell.Nearest(a.Character, sheets, 3), Sheets: sheets})
	}
	return out
}

// TablePlayers returns the agents at a table that play a character: those
// with the role player or human, in parley.yaml's order. The team lead
// asks each of them for a journal entry ([JOURNAL_CHECKPOINT]); it is the
// one place that says who they are, for the team lead and Unjournaled.
func (w *Workspace) TablePlayers() []string {
	var out []string
	for _, a := range w.AgentNames() {
		if w.HasRole(a, "player", HumanRole) {
			out = append(out, a)
		}
	}
	return out
}

// Unjournaled warns of the AI players (a program among TablePlayers) at
// a table with a team lead whose accepts: do not wake them for
// [JOURNAL_CHECKPOINT] (Accepts.Wakes, as delivery decides): the team
// lead asks each player for a journal entry with it, and a checkpoint
// the player does not accept is kept as context, with no call to its
// program, so its journal is never written. Without the type in the
// protocol, the lead sends none: nothing to say.
func (w *Workspace) Unjournaled(protocol *skills.Set) []string {
	if protocol == nil || !w.RoleHeld(TeamLeadRole) {
		return nil
	}
	if _, _, ok := protocol.Type(campaigns.JournalCheckpointType); !ok {
		return nil
	}
	checkpoint := mailbox.New(nil) // as the team lead sends it
	checkpoint.Set("type", campaigns.JournalCheckpointType)
	var out []string
	for _, name := range w.TablePlayers() {
		a, ok := w.Agent(name)
		if !ok || !a.RunsProgram() || a.Accepts.Wakes(checkpoint) {
			continue
		}
		who := a.Name + " plays " + a.Character + " and"
		if a.Character == "" {
			who = a.Name + ", a player,"
		}
		ac := a.Accepts
		out = append(out, fmt.Sprintf("%s:%d: %s: %s does not accept [%s]: the team lead's call for its journal entry is kept as context, its program is not run, and its journal is never written (add %s to accepts:)",
			ConfigFile, ac.Line, ac.Key, who, campaigns.JournalCheckpointType, campaigns.JournalCheckpointType))
	}
	return out
}

// MissingRunFiles warns of the arguments of a program's run: that look
// like a file of the workspace (a relative path with a "/", no spaces,
// not an option) and name none: a typo in a script's path (run: [sh,
// agents/fixr.sh]) that every message the agent is sent would fail on.
// The program itself is not looked at: one that cannot be started says
// so when the runner starts it. Not part of Lint: the files are the
// workspace's, not parley.yaml's; the runner says it when it starts.
func (w *Workspace) MissingRunFiles() []string {
	var out []string
	for i, a := range w.Config.Agents {
		if a.Driver != DriverCommand && a.Driver != DriverSession || len(a.Run) < 2 || a.Remote != "" {
			continue
		}
		for _, arg := range a.Run[1:] {
			if !strings.Contains(arg, "/") || strings.ContainsAny(arg, " \t=:$*?") || strings.HasPrefix(arg, "-") || filepath.IsAbs(arg) || strings.HasPrefix(arg, "~") {
				continue
			}
			if _, err := os.Stat(filepath.Join(w.Root, filepath.FromSlash(arg))); !errors.Is(err, fs.ErrNotExist) {
				continue
			}
			line := a.RunLine
			if line == 0 {
				line = a.Line
			}
			out = append(out, fmt.Sprintf("%s:%d: agents[%d].run: %s is no file in the workspace: its program will fail on every message (a typo?)", ConfigFile, line, i, arg))
		}
	}
	return out
}

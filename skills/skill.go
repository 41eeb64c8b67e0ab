// Package skills reads protocol skills: markdown documents that define the
// message types agents exchange — who sends each to whom, its fields,
// their allowed values, and the rules they must keep. It extracts that
// schema from the documents as people write them (headings, reference and
// field tables, Required:/Optional: lines, example payloads, hard rules),
// reports what it cannot understand, and checks messages against it. The
// skills parley ships are embedded; a workspace's skills/ directory adds to
// and overrides them.
package skills

import (
	"fmt"
	"strings"
)

// Skill is one protocol document and the schema read from it.
type Skill struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Version     string `json:"version,omitempty"`
	// Source is where the skill was read from: a file path, or
	// "builtin:<file>" for a shipped skill.
	Source string `json:"source"`
	// Hash is the start of the SHA-256 of the file's bytes: which version
	// of the document checked a message (see Ref).
	Hash string `json:"hash"`

	Types        []*Type       `json:"types"`
	Signals      []*Signal     `json:"signals,omitempty"`
	Deprecations []Deprecation `json:"deprecations,omitempty"`
	// Problems is what the document holds that could not be read.
	Problems []Problem `json:"problems,omitempty"`
}

// Ref names the skill and the version of its file: "dnd-team@1a2b3c4d5e6f",
// as the journal records the skill that checked each message.
func (s *Skill) Ref() string { return s.Name + "@" + s.Hash }

// Type is one message type.
type Type struct {
	Name string `json:"name"`
	// Tagged is set for a tag-first type (a "[NARRATIVE]" heading).
	Tagged      bool   `json:"tagged,omitempty"`
	Line        int    `json:"line"`
	Section     string `json:"section,omitempty"` // the heading it is under
	Description string `json:"description,omitempty"`

	// Senders and Recipients are roles (gm, player, team-lead, worker,
	// ...), "any" for any agent. AllRecipients says the message goes to
	// every agent of the recipient roles (a broadcast, or "player
	// teammates"), rather than to one of them.
	Senders       []string `json:"senders,omitempty"`
	Recipients    []string `json:"recipients,omitempty"`
	AllRecipients bool     `json:"all_recipients,omitempty"`
	// SenderText and RecipientText are as the document writes them.
	SenderText    string `json:"sender_text,omitempty"`
	RecipientText string `json:"recipient_text,omitempty"`
	// RecipientLine is the line that says where the type goes.
	RecipientLine int `json:"recipient_line,omitempty"`
	// Observers are roles that see every message of the type, whoever it
	// is sent to (the gm and the narrator see every [PLAYER_TO_PLAYER]):
	// each gets a copy. ObserversLine is the line of the rule.
	Observers     []string `json:"observers,omitempty"`
	ObserversLine int      `json:"observers_line,omitempty"`

	// Transport is "broadcast" or "direct". NoBroadcast is set for
	// structured requests, which must name their recipient.
	Transport   string `json:"transport,omitempty"`
	NoBroadcast bool   `json:"no_broadcast,omitempty"`

	// Phase is when the type may be sent: "1+", "1 only", "2+"; empty
	// when the protocol has no phases.
	Phase      string       `json:"phase,omitempty"`
	Deprecated *Deprecation `json:"deprecated,omitempty"`

	Fields []*Field `json:"fields,omitempty"`
	Rules  []*Rule  `json:"rules,omitempty"`
}

// Field is one field of a message type.
type Field struct {
	// Name is the field's key; nested fields are written with dots, and
	// list elements with [] ("characters[].name").
	Name        string `json:"name"`
	Required    bool   `json:"required"`
	Description string `json:"description,omitempty"`
	// Enum is the list of allowed values, when the protocol gives one.
	Enum []string `json:"enum,omitempty"`
	// When, if set, says the field belongs to the message only when
	// another field has a value ("command" is "start").
	When *Condition `json:"when,omitempty"`
	Line int        `json:"line,omitempty"`
}

// Rule is a hard rule: when any of If holds, Then must hold.
type Rule struct {
	Text string      `json:"text"`
	If   []Condition `json:"if"`
	Then Condition   `json:"then"`
	Line int         `json:"line"`
}

// Condition compares a field (a dotted path) with a value.
type Condition struct {
	Path  string `json:"path"`
	Op    string `json:"op"` // "==", "!=", ">", ">=", "<", "<="
	Value string `json:"value"`
}

func (c Condition) String() string {
	if c.Op == "==" {
		return c.Path + ": " + c.Value
	}
	return c.Path + " " + c.Op + " " + c.Value
}

// Signal is one value of the signal field and what it means.
type Signal struct {
	Name    string `json:"name"`
	Meaning string `json:"meaning,omitempty"`
	// Direction is the heading of its table ("Agent → Orchestrator").
	Direction string `json:"direction,omitempty"`
	// Senders are the roles that emit it; Recipients those it is sent to.
	Senders    []string `json:"senders,omitempty"`
	Recipients []string `json:"recipients,omitempty"`
	Line       int      `json:"line"`
}

// Deprecation says a type was retired, when, and what replaces it.
type Deprecation struct {
	Type        string `json:"type"`
	Introduced  string `json:"introduced,omitempty"`
	Deprecated  string `json:"deprecated"`
	Replacement string `json:"replacement,omitempty"`
	Line        int    `json:"line"`
}

// Problem is something in a skill document that could not be read. An
// error makes the skill unusable; a warning is shown and skipped.
type Problem struct {
	Line    int    `json:"line"`
	Section string `json:"section,omitempty"`
	Message string `json:"message"`
	Warning bool   `json:"warning,omitempty"`
}

func (p Problem) String() string {
	s := fmt.Sprintf("line %d", p.Line)
	if p.Section != "" {
		s += " (" + p.Section + ")"
	}
	kind := "error"
	if p.Warning {
		kind = "warning"
	}
	return s + ": " + kind + ": " + p.Message
}

// Errors returns the problems that make the skill unusable.
func (s *Skill) Errors() []Problem {
	var out []Problem
	for _, p := range s.Problems {
		if !p.Warning {
			out = append(out, p)
		}
	}
	return out
}

// Err returns an error listing the skill's errors, or nil.
func (s *Skill) Err() error {
	errs := s.Errors()
	if len(errs) == 0 {
		return nil
	}
	lines := make([]string, len(errs))
	for i, p := range errs {
		lines[i] = fmt.Sprintf("  %s:%d: %s", s.Source, p.Line, p.Message)
	}
	return &SkillError{Skill: s.Name, Source: s.Source, Problems: errs, text: strings.Join(lines, "\n")}
}

// SkillError is the error for a skill that cannot be used.
type SkillError struct {
	Skill, Source string
	Problems      []Problem
	text          string
}

func (e *SkillError) Error() string {
	name := e.Skill
	if name == "" {
		name = e.Source
	}
	return fmt.Sprintf("skill %s cannot be used:\n%s", name, e.text)
}

// Type returns the type with this name.
func (s *Skill) Type(name string) (*Type, bool) {
	for _, t := range s.Types {
		if t.Name == name {
			return t, true
		}
	}
	return nil, false
}

// Field returns the field with this name.
func (t *Type) Field(name string) (*Field, bool) {
	for _, f := range t.Fields {
		if f.Name == name {
			return f, true
		}
	}
	return nil, false
}

// IsBroadcast reports whether messages of the type go to everyone.
func (t *Type) IsBroadcast() bool { return t.Transport == "broadcast" }
